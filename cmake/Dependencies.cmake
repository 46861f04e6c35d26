# Third-party dependencies, all from Debian 12 packages (scripts/setup.sh).
# Quirks of these packages are noted where they bite.

find_package(Threads REQUIRED)

# The lean board worker (TUNEFARM_LEAN_WORKER) needs only what it links:
# gRPC and Protobuf (found by rpc/), nlohmann-json, CLI11 (header-only) and,
# for its tests, GoogleTest. No LLVM, SQLite, XGBoost, ONNX, oneDNN, fmt,
# spdlog or toml++.
if(TUNEFARM_LEAN_WORKER)
  find_package(nlohmann_json REQUIRED)
  find_package(CLI11 CONFIG REQUIRED)
  set(TUNEFARM_HAVE_CUDA OFF)
  if(TUNEFARM_BUILD_TESTS)
    find_package(GTest REQUIRED)
  endif()
  return()
endif()

# LLVM 16: its CMake config needs the C language enabled (see project()).
find_package(LLVM 16 REQUIRED CONFIG PATHS /usr/lib/llvm-16/lib/cmake/llvm NO_DEFAULT_PATH)
message(STATUS "tunefarm: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
# Link the one shared libLLVM rather than dozens of static components.
add_library(tunefarm_llvm INTERFACE)
target_include_directories(tunefarm_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_compile_definitions(tunefarm_llvm INTERFACE ${LLVM_DEFINITIONS})
target_link_libraries(tunefarm_llvm INTERFACE LLVM)

find_package(SQLite3 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json REQUIRED)
# ONNX 1.12 (libonnx-dev) for model import; its targets name protobuf::libprotobuf,
# which FindProtobuf defines.
find_package(Protobuf REQUIRED)
find_package(ONNX 1.12 REQUIRED CONFIG)

# CUDA toolkit: optional; later backends use NVRTC when it is present.
if(EXISTS /usr/local/cuda/include/nvrtc.h)
  set(TUNEFARM_HAVE_CUDA ON)
  message(STATUS "tunefarm: CUDA toolkit found at /usr/local/cuda")
else()
  set(TUNEFARM_HAVE_CUDA OFF)
  message(STATUS "tunefarm: no CUDA toolkit; the CUDA backend is disabled")
endif()

if(TUNEFARM_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
