# CPACK_PRE_BUILD_SCRIPTS: strip the staged programs the way dh_strip does
# (also dropping the .comment and .note sections plain `strip` keeps), before
# CPack writes md5sums and runs dpkg-shlibdeps.
file(GLOB_RECURSE staged_programs LIST_DIRECTORIES false "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/bin/*")
if(NOT staged_programs)
  message(FATAL_ERROR "strip.cmake: no programs under ${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
endif()
foreach(f IN LISTS staged_programs)
  execute_process(COMMAND strip --remove-section=.comment --remove-section=.note --strip-unneeded "${f}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "strip.cmake: strip failed on ${f}")
  endif()
endforeach()
