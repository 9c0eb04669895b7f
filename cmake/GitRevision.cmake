# Regenerates build_info.cpp on every build, so the binary always reports the revision it was built from.
set(MGPU_BUILD_INFO_CPP ${CMAKE_BINARY_DIR}/generated/build_info.cpp)
add_custom_target(mgpu_build_info
  COMMAND ${CMAKE_COMMAND}
    -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
    -DOUTPUT=${MGPU_BUILD_INFO_CPP}
    -DPROJECT_VERSION=${PROJECT_VERSION}
    -P ${CMAKE_SOURCE_DIR}/cmake/WriteBuildInfo.cmake
  BYPRODUCTS ${MGPU_BUILD_INFO_CPP}
  COMMENT "Recording git revision"
  VERBATIM)
