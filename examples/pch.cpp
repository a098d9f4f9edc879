// The translation unit the examples' precompiled header is built with (examples/CMakeLists.txt).
