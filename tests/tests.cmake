# Every tests/test_*.c is one cmocka executable and one ctest test named after
# the file without the "test_" prefix, so `ctest -R evq` runs test_evq.c alone.
# cmocka is needed by the tests only: without it `make demo` still builds mpsim.
pkg_check_modules(CMOCKA IMPORTED_TARGET cmocka)
if(NOT CMOCKA_FOUND)
  message(STATUS "cmocka not found: the unit tests are not built (make test installs it)")
  set(MPSIM_TEST_SOURCES "")
else()
  file(GLOB MPSIM_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_*.c)
endif()
foreach(src ${MPSIM_TEST_SOURCES})
  get_filename_component(exe ${src} NAME_WE)
  string(REGEX REPLACE "^test_" "" name ${exe})
  add_executable(${exe} ${src})
  target_link_libraries(${exe} PRIVATE mpsim_lib PkgConfig::CMOCKA)
  target_compile_definitions(${exe} PRIVATE
    MPSIM_SOURCE_DIR="${CMAKE_CURRENT_SOURCE_DIR}"
    MPSIM_BINARY="$<TARGET_FILE:mpsim>")
  add_test(NAME ${name} COMMAND ${exe} WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endforeach()
# Shell-level tests of the command line (exit codes, messages, files written).
file(GLOB MPSIM_SH_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/cli_*.sh)
foreach(src ${MPSIM_SH_TESTS})
  get_filename_component(name ${src} NAME_WE)
  add_test(NAME ${name} COMMAND bash ${src} $<TARGET_FILE:mpsim> ${CMAKE_CURRENT_SOURCE_DIR})
  # only cli_plots draws: gnuplot would cost the other command-line tests a minute
  if(NOT name STREQUAL "cli_plots")
    set_tests_properties(${name} PROPERTIES ENVIRONMENT MPSIM_NO_PLOTS=1)
  endif()
endforeach()
# The value fuzzer's saved corpus, replayed: each file to its expected status.
file(GLOB MPSIM_FUZZ_CORPUS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/*.yaml)
# The prefetchers of the packet path still prefetch in the built binary.
add_test(NAME prefetch_kept COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/prefetch_kept.sh
         $<TARGET_FILE:mpsim> "${CMAKE_BUILD_TYPE}")
set_tests_properties(prefetch_kept PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME fuzz_replay COMMAND fuzz_replay ${MPSIM_FUZZ_CORPUS}
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus)
# Formatting is machine-checked (.clang-format); skipped where clang-format is absent.
find_program(CLANG_FORMAT clang-format)
if(CLANG_FORMAT)
  file(GLOB_RECURSE MPSIM_FORMAT_FILES CONFIGURE_DEPENDS
    ${CMAKE_CURRENT_SOURCE_DIR}/src/*.c ${CMAKE_CURRENT_SOURCE_DIR}/src/*.h
    ${CMAKE_CURRENT_SOURCE_DIR}/tests/*.c ${CMAKE_CURRENT_SOURCE_DIR}/tests/*.h
    ${CMAKE_CURRENT_SOURCE_DIR}/bench/*.c ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/*.c
    ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/*.h)
  add_test(NAME format COMMAND ${CLANG_FORMAT} --dry-run --Werror ${MPSIM_FORMAT_FILES})
endif()
# A sweep over MPI ranks against the same sweep with -j 2 (needs mpirun); a
# build without MPI is checked to refuse a launcher's several ranks.
if(MPSIM_MPI AND MPI_C_FOUND AND MPIEXEC_EXECUTABLE)
  add_test(NAME mpi_sweep COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/mpi_sweep.sh
    $<TARGET_FILE:mpsim> ${MPIEXEC_EXECUTABLE})
  # one run partitioned over 1, 2 and 4 ranks: the same bytes as one process
  add_test(NAME mpi_part COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/mpi_part.sh
    $<TARGET_FILE:mpsim> ${MPIEXEC_EXECUTABLE})
else()
  add_test(NAME mpi_sweep COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/mpi_sweep.sh
    $<TARGET_FILE:mpsim> --without-mpi)
endif()
# the same partitioned runs over threads of one process (--threads)
add_test(NAME threads_part COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/mpi_part.sh
  $<TARGET_FILE:mpsim> --threads)
