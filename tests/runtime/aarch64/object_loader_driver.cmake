# What the AArch64 object loader test (object_loader_aarch64_test.cpp) runs
# under qemu-aarch64: object_loader_driver, cross-compiled statically from the
# runtime's sources and object_loader_driver.cc, and relocations.o, assembled
# from relocations.S. The cross compiler and qemu are optional for the build
# (scripts/setup.sh installs both); without them the test fails, naming what
# is missing. Included from tests/CMakeLists.txt after tunefarm_runtime_tests.
find_program(TUNEFARM_AARCH64_CXX aarch64-linux-gnu-g++)
find_program(TUNEFARM_QEMU_AARCH64 qemu-aarch64)

set(aarch64_dir ${CMAKE_CURRENT_BINARY_DIR}/runtime/aarch64)
set(aarch64_driver "")
set(aarch64_relocations "")
set(aarch64_qemu "")
if(TUNEFARM_QEMU_AARCH64)
  set(aarch64_qemu ${TUNEFARM_QEMU_AARCH64})
endif()
if(TUNEFARM_AARCH64_CXX)
  set(aarch64_driver ${aarch64_dir}/object_loader_driver)
  set(aarch64_relocations ${aarch64_dir}/relocations.o)
  get_target_property(runtime_sources tunefarm_runtime_objs SOURCES)
  get_target_property(runtime_source_dir tunefarm_runtime_objs SOURCE_DIR)
  set(driver_sources ${CMAKE_CURRENT_SOURCE_DIR}/runtime/aarch64/object_loader_driver.cc)
  foreach(source ${runtime_sources})
    list(APPEND driver_sources ${runtime_source_dir}/${source})
  endforeach()
  file(GLOB driver_headers ${runtime_source_dir}/*.h ${TUNEFARM_INCLUDE_DIR}/tunefarm/runtime/*.h
       ${TUNEFARM_INCLUDE_DIR}/tunefarm/common/status.h)
  add_custom_command(
    OUTPUT ${aarch64_driver}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${aarch64_dir}
    COMMAND ${TUNEFARM_AARCH64_CXX} -std=c++20 -O2 -static -I${TUNEFARM_INCLUDE_DIR} ${driver_sources}
            -o ${aarch64_driver} -pthread
    DEPENDS ${driver_sources} ${driver_headers}
    COMMENT "Cross-compiling the AArch64 object loader driver"
    VERBATIM)
  add_custom_command(
    OUTPUT ${aarch64_relocations}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${aarch64_dir}
    COMMAND ${TUNEFARM_AARCH64_CXX} -c ${CMAKE_CURRENT_SOURCE_DIR}/runtime/aarch64/relocations.S
            -o ${aarch64_relocations}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/runtime/aarch64/relocations.S
    COMMENT "Assembling the AArch64 relocation test object"
    VERBATIM)
  add_custom_target(tunefarm_aarch64_object_loader_driver DEPENDS ${aarch64_driver} ${aarch64_relocations})
  add_dependencies(tunefarm_runtime_tests tunefarm_aarch64_object_loader_driver)
endif()
target_compile_definitions(tunefarm_runtime_tests PRIVATE
  TUNEFARM_AARCH64_DRIVER="${aarch64_driver}"
  TUNEFARM_AARCH64_RELOCATIONS="${aarch64_relocations}"
  TUNEFARM_QEMU_AARCH64="${aarch64_qemu}")
