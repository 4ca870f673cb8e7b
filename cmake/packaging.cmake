# Debian packages from the CMake install (CPack's DEB generator; scripts/package.sh runs it):
#   lite      the command (/usr/bin/lite), its torch and MPI executables (/usr/libexec/lite), man pages, shell
#             completions, the docs and the bundled model, data and trace (/usr/share/lite)
#   lite-mpi  cache-sim sweeps over MPI ranks (/usr/libexec/lite/lite-mpi), apart so that Open MPI is recommended,
#             not required: it is the one executable that links it
#   lite-dev  the libraries, headers and CMake package config, for find_package(lite)
# Run-time dependencies come from dpkg-shlibdeps (libtorch, which holds Gloo, zstd, ...), plus what no binary links:
# OpenBLAS, without which libtorch's fp32 matmul runs on the reference BLAS (~40x slower); its OpenMP build first,
# which `lite` points lite-torch at (apps/lite/blas_environment.hpp: the pthread build's threads fight libgomp's).
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(lite_packages lite dev)
if(TARGET lite_mpi_cli)
  list(APPEND lite_packages mpi)
endif()
set(CPACK_COMPONENTS_ALL ${lite_packages})
set(CPACK_PACKAGE_NAME lite)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "lite maintainers <maintainers@users.noreply.a-seed-fca3c88a.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "make a model lighter and size the cache in front of it")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)

set(CPACK_DEBIAN_LITE_PACKAGE_NAME lite)
set(CPACK_DEBIAN_LITE_PACKAGE_DEPENDS "libopenblas0-openmp | libopenblas0-pthread | libopenblas0")
set(CPACK_DEBIAN_LITE_PACKAGE_RECOMMENDS "lite-mpi, zstd")
# A component's description is the package's long description (CPack indents it; the synopsis is the summary).
set(CPACK_COMPONENT_LITE_DESCRIPTION
    "lite prunes, quantizes and distills TorchScript models and measures what each
transform bought (size, latency, accuracy before and after), and replays
request traces through cache policies and sizes to size the cache in front of
a model. Every artifact is a TorchScript file stock PyTorch loads and runs.
Its seven verbs: profile, quantize, prune, distill, optimize (the cheapest
variant that meets a latency target), cache-sim and run (a recipe of steps).")
set(CPACK_DEBIAN_MPI_PACKAGE_NAME lite-mpi)
set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "lite (= ${PROJECT_VERSION}), openmpi-bin")
set(CPACK_COMPONENT_MPI_DESCRIPTION
    "lite-mpi runs lite cache-sim as one rank of an MPI job: mpirun -n N lite
cache-sim TRACE spreads the policies, sizes and clusters of a sweep over the
ranks and prints the records one process would.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME lite-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "lite (= ${PROJECT_VERSION}), libtorch-dev, libgloo-dev, libfmt-dev, nlohmann-json3-dev, libzstd-dev, zlib1g-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "The static libraries, public headers and CMake package configuration of
lite, the model compression and cache sizing toolkit, for programs that
call its seven verbs (profile, quantize, prune, distill, optimize, cache-sim,
run) as a library.")

# What Debian wants in every package's doc folder: the copyright and a changelog, compressed (gzip -9n: no name or
# time stamp, so the bytes depend on the text alone).
find_program(LITE_GZIP gzip REQUIRED)
foreach(component ${lite_packages})
  set(package lite-${component})
  if(component STREQUAL "lite")
    set(package lite)
  endif()
  set(changelog_gz ${CMAKE_BINARY_DIR}/debian/${package}/changelog.gz)
  add_custom_command(OUTPUT ${changelog_gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/debian/${package}
    COMMAND ${LITE_GZIP} -9n -c ${PROJECT_SOURCE_DIR}/cmake/debian/changelog > ${changelog_gz}
    DEPENDS ${PROJECT_SOURCE_DIR}/cmake/debian/changelog)
  list(APPEND lite_changelogs ${changelog_gz})
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright ${changelog_gz}
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
endforeach()
add_custom_target(lite_changelogs ALL DEPENDS ${lite_changelogs})

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/lite COMPONENT lite)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/lite/docs COMPONENT lite)
install(DIRECTORY data recipes DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lite COMPONENT lite)

include(CPack)
