// kiln's version, in one place: CMake reads it from here.
#ifndef KILN_VERSION_HPP
#define KILN_VERSION_HPP

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0
#define KILN_VERSION (KILN_VERSION_MAJOR * 10000 + KILN_VERSION_MINOR * 100 + KILN_VERSION_PATCH)

#endif
