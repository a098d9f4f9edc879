// The translation unit the precompiled headers of the tests are built with (tests/CMakeLists.txt).
