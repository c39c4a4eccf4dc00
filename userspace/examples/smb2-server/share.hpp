// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one share the example server exports: a directory, and the
 * translation between SMB2's view of files ([MS-FSCC] information classes,
 * FILETIMEs, attributes, '\'-separated names relative to the share) and
 * the POSIX one. Every path a client sends is resolved beneath the share's
 * directory with openat2(RESOLVE_BENEATH): ".." and symbolic links cannot
 * lead out of it.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_SERVER_SHARE_HPP
#define SMBDIRECT_EXAMPLES_SMB2_SERVER_SHARE_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

#include "../smb2/smb2.hpp"

namespace smb2 {

/* An NTSTATUS for an errno from the file system. */
Status status_from_errno(int err);

class Share {
public:
	/* Opens dir; ok() tells whether that worked. */
	explicit Share(const std::string &dir);
	~Share();
	Share(const Share &) = delete;
	Share &operator=(const Share &) = delete;

	bool ok() const
	{
		return root_ >= 0;
	}
	int root_fd() const
	{
		return root_;
	}

	/*
	 * "dir\\file" to "dir/file" ("" for the root, "." then). Rejects empty
	 * components in the middle, "." and "..", and names with '/' or NUL.
	 */
	static Result<std::string> relative_path(std::string_view smb_name);
	/* openat2 beneath the share's directory (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). */
	int open_beneath(const std::string &rel, int flags, mode_t mode = 0) const;
	/* The parent directory (opened beneath the root) and the last component. */
	struct Parent {
		int fd = -1;
		std::string name;
	};
	Result<Parent> parent_of(const std::string &rel) const;

private:
	int root_ = -1;
};

/* 100 ns units since 1601 from a timespec, and back. */
uint64_t filetime_from(const struct timespec &ts);
struct timespec timespec_from_filetime(uint64_t ft);

/* FILE_ATTRIBUTE_* for a stat. */
uint32_t file_attributes(const struct stat &st);

/* --- information classes ([MS-FSCC] 2.4, 2.5) ------------------------------ */

/* FileInformationClass values the server answers. */
constexpr uint8_t file_directory_information = 1;
constexpr uint8_t file_full_directory_information = 2;
constexpr uint8_t file_both_directory_information = 3;
constexpr uint8_t file_basic_information = 4;
constexpr uint8_t file_standard_information = 5;
constexpr uint8_t file_internal_information = 6;
constexpr uint8_t file_ea_information = 7;
constexpr uint8_t file_access_information = 8;
constexpr uint8_t file_name_information = 9;
constexpr uint8_t file_rename_information = 10;
constexpr uint8_t file_names_information = 12;
constexpr uint8_t file_disposition_information = 13;
constexpr uint8_t file_position_information = 14;
constexpr uint8_t file_mode_information = 16;
constexpr uint8_t file_alignment_information = 17;
constexpr uint8_t file_all_information = 18;
constexpr uint8_t file_allocation_information = 19;
constexpr uint8_t file_end_of_file_information = 20;
constexpr uint8_t file_stream_information = 22;
constexpr uint8_t file_network_open_information = 34;
constexpr uint8_t file_attribute_tag_information = 35;
constexpr uint8_t file_id_both_directory_information = 37;
constexpr uint8_t file_id_full_directory_information = 38;

/* FileSystemInformationClass values. */
constexpr uint8_t fs_volume_information = 1;
constexpr uint8_t fs_size_information = 3;
constexpr uint8_t fs_device_information = 4;
constexpr uint8_t fs_attribute_information = 5;
constexpr uint8_t fs_full_size_information = 7;
constexpr uint8_t fs_sector_size_information = 11;

/*
 * QUERY_INFO of a FILE class for an open file ("name" is its path from
 * the share's root, for FileAllInformation/FileNameInformation). Nothing
 * for a class we do not answer.
 */
std::optional<Bytes> file_info(uint8_t info_class, const struct stat &st, std::string_view name,
			       uint32_t access, bool delete_pending);
/* QUERY_INFO of a FILESYSTEM class for the share's file system. */
std::optional<Bytes> fs_info(uint8_t info_class, int fd);

/* One QUERY_DIRECTORY entry; false for a class we do not answer. */
bool is_directory_class(uint8_t info_class);
Bytes directory_entry(uint8_t info_class, const struct stat &st, std::string_view name,
		      uint32_t file_index);

/* Case-insensitive wildcard match of a name against an SMB pattern ('*', '?'). */
bool pattern_matches(std::string_view pattern, std::string_view name);

} // namespace smb2

#endif
