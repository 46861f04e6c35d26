# tunefarm_add_kernel(<target>
#     NAME <name>            # header <name>.h, object <name>.o
#     WORKLOAD <file.tf>     # a workload in the workload language: the C function is its name
#   | MODEL <file.onnx>      # or an ONNX model: every task's kernel and <model>_bind, _prepack, _run
#     [SET <k=v>...]         # --set: a workload's parameters, a model's symbolic dimensions
#     [DB <tunefarm.db>]     # tuning log to take the best records from
#     [TARGET "<target>"]    # default: "llvm" (this machine); a model needs an llvm target
#     [REQUIRE_TUNED]        # fail the build instead of using a default schedule
#     [EMBED_WEIGHTS])       # a model: every weight in the object (--embed-weights)
#
# Adds `tunefarm compile` to the build: the object file joins <target>'s
# sources, the generated header's folder its include path, and the tunefarm
# runtime its link libraries. The step reruns when the workload, the model or
# the log changes, and rewrites its outputs only when the compiled code
# changed, so dependants relink exactly when the log's best records do.
function(tunefarm_add_kernel target)
  cmake_parse_arguments(TK "REQUIRE_TUNED;EMBED_WEIGHTS" "NAME;WORKLOAD;MODEL;DB;TARGET" "SET" ${ARGN})
  if(NOT TK_NAME OR (NOT TK_WORKLOAD AND NOT TK_MODEL) OR (TK_WORKLOAD AND TK_MODEL))
    message(FATAL_ERROR "tunefarm_add_kernel(${target}): NAME and one of WORKLOAD or MODEL are required")
  endif()
  if(NOT TK_TARGET)
    set(TK_TARGET "llvm")
  endif()
  if(NOT TUNEFARM_EXECUTABLE)
    message(FATAL_ERROR "tunefarm_add_kernel: TUNEFARM_EXECUTABLE is not set (use find_package(tunefarm))")
  endif()
  if(TK_MODEL)
    set(TK_WORKLOAD "${TK_MODEL}")
  endif()
  get_filename_component(workload "${TK_WORKLOAD}" ABSOLUTE)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/tunefarm_kernels/${TK_NAME}")
  set(object "${out_dir}/${TK_NAME}.o")
  set(header "${out_dir}/${TK_NAME}.h")
  set(args compile "${workload}" --target "${TK_TARGET}" -o "${out_dir}/tmp/${TK_NAME}.o"
           --header "${out_dir}/tmp/${TK_NAME}.h")
  foreach(setting IN LISTS TK_SET)
    list(APPEND args --set "${setting}")
  endforeach()
  set(depends "${workload}")
  if(TK_DB)
    get_filename_component(db "${TK_DB}" ABSOLUTE)
    list(APPEND args --db "${db}")
    list(APPEND depends "${db}")
  endif()
  if(TK_REQUIRE_TUNED)
    list(APPEND args --require-tuned)
  endif()
  if(TK_EMBED_WEIGHTS)
    list(APPEND args --embed-weights)
  endif()
  add_custom_command(
    OUTPUT "${object}" "${header}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${out_dir}/tmp"
    COMMAND "${TUNEFARM_EXECUTABLE}" ${args}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different "${out_dir}/tmp/${TK_NAME}.o" "${object}"
    COMMAND ${CMAKE_COMMAND} -E copy_if_different "${out_dir}/tmp/${TK_NAME}.h" "${header}"
    DEPENDS ${depends}
    COMMENT "tunefarm: compiling ${TK_NAME} from ${TK_WORKLOAD}"
    VERBATIM)
  set_source_files_properties("${object}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  target_sources(${target} PRIVATE "${object}" "${header}")
  target_include_directories(${target} PRIVATE "${out_dir}")
  target_link_libraries(${target} PRIVATE tunefarm::runtime)
endfunction()
