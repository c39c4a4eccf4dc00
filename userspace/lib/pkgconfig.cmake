# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs at install time (install(CODE) in CMakeLists.txt): writes
# smbdirect.pc for the prefix being installed to. Inputs: SD_PC_IN,
# SD_PC_OUT, SD_PC_VERSION, SD_PC_LIBDIR_IN, SD_PC_INCLUDEDIR_IN and the
# install script's CMAKE_INSTALL_PREFIX.
set(SD_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
if(IS_ABSOLUTE "${SD_PC_LIBDIR_IN}")
	set(SD_PC_LIBDIR "${SD_PC_LIBDIR_IN}")
else()
	set(SD_PC_LIBDIR "\${exec_prefix}/${SD_PC_LIBDIR_IN}")
endif()
if(IS_ABSOLUTE "${SD_PC_INCLUDEDIR_IN}")
	set(SD_PC_INCLUDEDIR "${SD_PC_INCLUDEDIR_IN}")
else()
	set(SD_PC_INCLUDEDIR "\${prefix}/${SD_PC_INCLUDEDIR_IN}")
endif()
configure_file("${SD_PC_IN}" "${SD_PC_OUT}" @ONLY)
