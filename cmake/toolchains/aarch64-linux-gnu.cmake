# CMake toolchain file: cross-builds for arm64 (aarch64) Linux with Debian's
# g++-aarch64-linux-gnu against the sysroot scripts/arm64-sysroot.sh assembles
# from Debian 12's arm64 packages; ctest runs the results under qemu-aarch64.
#
#   scripts/arm64-sysroot.sh
#   cmake -S <project> -B <build> -DCMAKE_TOOLCHAIN_FILE=<repo>/cmake/toolchains/aarch64-linux-gnu.cmake
#
# The sysroot is TUNEFARM_ARM64_SYSROOT (a cache variable, else the
# environment variable of that name, else <repo>/build-arm64/sysroot).
#
# How the pieces fit: --sysroot (CMAKE_SYSROOT) sends the compiler and the
# linker to the sysroot for every third-party header and library (gRPC,
# Protobuf, OpenSSL, zlib, ...), and the linker follows their DT_NEEDED
# entries there too. The cross compiler keeps its own C and C++ runtime
# (crt files, glibc 2.36 headers and libc.so, libstdc++ 12, libgcc from the
# *-arm64-cross packages): it searches those ahead of the sysroot whatever
# --sysroot says. They are the same glibc and GCC releases as the sysroot's
# libc6 and libstdc++6, which the programs load at run time under qemu, so
# the two never disagree on a symbol version. Programs the build runs
# (protoc, grpc_cpp_plugin) are the host's.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

get_filename_component(_tunefarm_repo "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
if(NOT TUNEFARM_ARM64_SYSROOT)
  if(DEFINED ENV{TUNEFARM_ARM64_SYSROOT} AND NOT "$ENV{TUNEFARM_ARM64_SYSROOT}" STREQUAL "")
    set(TUNEFARM_ARM64_SYSROOT "$ENV{TUNEFARM_ARM64_SYSROOT}")
  else()
    set(TUNEFARM_ARM64_SYSROOT "${_tunefarm_repo}/build-arm64/sysroot")
  endif()
endif()
get_filename_component(TUNEFARM_ARM64_SYSROOT "${TUNEFARM_ARM64_SYSROOT}" ABSOLUTE)
set(TUNEFARM_ARM64_SYSROOT "${TUNEFARM_ARM64_SYSROOT}" CACHE PATH
    "arm64 sysroot made by scripts/arm64-sysroot.sh" FORCE)
if(NOT EXISTS "${TUNEFARM_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/libc.so.6")
  message(FATAL_ERROR "No arm64 sysroot at ${TUNEFARM_ARM64_SYSROOT}: run scripts/arm64-sysroot.sh "
                      "(or set TUNEFARM_ARM64_SYSROOT to one it made)")
endif()
# try_compile() projects read this file again without the cache: hand them the path.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TUNEFARM_ARM64_SYSROOT)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_SYSROOT "${TUNEFARM_ARM64_SYSROOT}")

# Libraries, headers and packages from the sysroot only; programs from the host.
set(CMAKE_FIND_ROOT_PATH "${TUNEFARM_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (gRPC's Findre2 and Findc-ares use it): the host's pkg-config,
# reading only the sysroot's .pc files and prefixing their paths with it.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${TUNEFARM_ARM64_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${TUNEFARM_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${TUNEFARM_ARM64_SYSROOT}/usr/lib/pkgconfig:${TUNEFARM_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# ctest (and add_custom_command on a built program) runs arm64 programs
# through user-mode qemu, their loader and libraries from the sysroot.
find_program(TUNEFARM_QEMU_AARCH64 qemu-aarch64 NO_CMAKE_FIND_ROOT_PATH)
if(NOT TUNEFARM_QEMU_AARCH64)
  message(FATAL_ERROR "qemu-aarch64 not found: install qemu-user (scripts/setup.sh does)")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR "${TUNEFARM_QEMU_AARCH64};-L;${TUNEFARM_ARM64_SYSROOT}")
