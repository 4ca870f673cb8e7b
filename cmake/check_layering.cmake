# Fails when a file under lib/lite/<area>/ includes a header of an area it may not use, or when an area's own
# CMakeLists links another area. The layer graph is not written here: it is read from the lite_area() lines of
# lib/CMakeLists.txt, which the configure step writes to LAYERS_FILE as "area (kind) -> dep dep: summary". An area
# may include its own headers and those of every area it reaches through its named ones. The targets link only
# the named areas too, so a symbol used across a forbidden edge fails to link; this check catches the include
# itself, even when only inline code or types are used.
#
# One exception, by design: a verb's descriptor, lite/<area>/verb.hpp, is data (its name, summary and recipe shape;
# header-only, torch-free, no code of the area), and any area may include it: lib/lite/verbs/ lists every verb, and
# lite optimize writes recipes whose steps name profile and cache-sim.
#
# Usage: cmake -DLIB_DIR=<source>/lib/lite -DLAYERS_FILE=<build>/lite_layers.txt -P check_layering.cmake
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST)
file(STRINGS ${LAYERS_FILE} layer_lines)
set(declared "")
foreach(line ${layer_lines})
  string(REGEX REPLACE "^([a-z_]+) .*" "\\1" area "${line}")
  string(REGEX REPLACE "^[a-z_]+ \\([a-z-]+\\) -> ([a-z_ ]*):.*" "\\1" deps "${line}")
  separate_arguments(deps)
  # Reachable areas: its own, and the reachable areas of each one it names (declared earlier, so already known).
  set(reach_${area} ${area})
  foreach(dep ${deps})
    list(APPEND reach_${area} ${reach_${dep}})
  endforeach()
  list(REMOVE_DUPLICATES reach_${area})
  list(APPEND declared ${area})
endforeach()

file(GLOB areas RELATIVE ${LIB_DIR} ${LIB_DIR}/*)
set(problems "")
foreach(area ${areas})
  if(NOT IS_DIRECTORY ${LIB_DIR}/${area})
    continue()
  endif()
  if(NOT area IN_LIST declared)
    string(APPEND problems "  lib/lite/${area}/: not an area; declare it with lite_area() in lib/CMakeLists.txt\n")
    continue()
  endif()
  file(GLOB_RECURSE files ${LIB_DIR}/${area}/*.hpp ${LIB_DIR}/${area}/*.cpp ${LIB_DIR}/${area}/*.in)
  foreach(file ${files})
    file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]lite/")
    foreach(line ${includes})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]lite/([a-z_]+)/.*" "\\1" used "${line}")
      if(used IN_LIST reach_${area})
        continue()
      endif()
      if(line MATCHES "lite/[a-z_]+/verb\\.hpp")
        continue()
      endif()
      file(RELATIVE_PATH rel ${LIB_DIR}/.. ${file})
      string(APPEND problems "  lib/${rel}: '${line}' (${area} may include only: ${reach_${area}})\n")
    endforeach()
  endforeach()
  # The graph is stated once: an area's CMakeLists adds sources and outside libraries, never another area.
  if(EXISTS ${LIB_DIR}/${area}/CMakeLists.txt)
    file(STRINGS ${LIB_DIR}/${area}/CMakeLists.txt links REGEX "target_link_libraries")
    foreach(line ${links})
      string(REGEX MATCHALL "lite_[a-z_]+" named "${line}")
      list(REMOVE_ITEM named lite_${area})
      if(named)
        string(APPEND problems "  lib/lite/${area}/CMakeLists.txt: '${line}' links ${named}; name the area in "
                               "lite_area(${area} DEPENDS ...) in lib/CMakeLists.txt instead\n")
      endif()
    endforeach()
  endif()
endforeach()
if(problems)
  message(FATAL_ERROR "lib/ includes must point down the layers:\n${problems}")
endif()
