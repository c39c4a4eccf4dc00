// SPDX-License-Identifier: LGPL-2.1-or-later
#include "share.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../smb2/unicode.hpp"

namespace smb2 {

namespace {

constexpr uint64_t filetime_unix_epoch = 116444736000000000ULL;

/* The FILE_ATTRIBUTE_* and times every directory class starts with. */
void put_times_sizes(Writer &w, const struct stat &st)
{
	w.le64(filetime_from(st.st_ctim)); /* no birth time in struct stat */
	w.le64(filetime_from(st.st_atim));
	w.le64(filetime_from(st.st_mtim));
	w.le64(filetime_from(st.st_ctim));
}

uint64_t allocation_size(const struct stat &st)
{
	return static_cast<uint64_t>(st.st_blocks) * 512;
}

void put_basic(Writer &w, const struct stat &st)
{
	put_times_sizes(w, st);
	w.le32(file_attributes(st));
	w.le32(0);
}

void put_standard(Writer &w, const struct stat &st, bool delete_pending)
{
	w.le64(allocation_size(st));
	w.le64(S_ISDIR(st.st_mode) ? 0 : static_cast<uint64_t>(st.st_size));
	w.le32(static_cast<uint32_t>(st.st_nlink));
	w.u8(delete_pending);
	w.u8(S_ISDIR(st.st_mode));
	w.le16(0);
}

Bytes utf16_or_empty(std::string_view s)
{
	auto u = utf16le_from_utf8(s);
	return u ? *u : Bytes{};
}

} // namespace

Status status_from_errno(int err)
{
	switch (err) {
	case ENOENT:
		return Status::object_name_not_found;
	case ENOTDIR:
		return Status::object_path_not_found;
	case EEXIST:
		return Status::object_name_collision;
	case EACCES:
	case EPERM:
	case EROFS:
		return Status::access_denied;
	case EISDIR:
		return Status::file_is_a_directory;
	case ENOTEMPTY:
		return Status::directory_not_empty;
	case ENOSPC:
	case EDQUOT:
		return Status::disk_full;
	case EXDEV:
	case ELOOP:
	case ENAMETOOLONG:
		return Status::object_name_invalid;
	case ENOMEM:
		return Status::insufficient_resources;
	case EINVAL:
		return Status::invalid_parameter;
	default:
		return Status::invalid_device_request;
	}
}

Share::Share(const std::string &dir)
{
	root_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
}

Share::~Share()
{
	if (root_ >= 0)
		::close(root_);
}

Result<std::string> Share::relative_path(std::string_view smb_name)
{
	/* Clients may send a leading '\'; the share root is the empty name. */
	while (!smb_name.empty() && smb_name.front() == '\\')
		smb_name.remove_prefix(1);
	if (smb_name.empty())
		return std::string(".");
	std::string out;
	size_t start = 0;
	for (;;) {
		size_t end = smb_name.find('\\', start);
		std::string_view part = smb_name.substr(start, end == std::string_view::npos
								      ? std::string_view::npos
								      : end - start);
		if (part.empty() || part == "." || part == ".." ||
		    part.find('/') != std::string_view::npos ||
		    part.find('\0') != std::string_view::npos)
			return make_error_code(Status::object_name_invalid);
		if (!out.empty())
			out += '/';
		out += part;
		if (end == std::string_view::npos)
			return out;
		start = end + 1;
		if (start == smb_name.size())
			return out; /* a trailing '\' */
	}
}

int Share::open_beneath(const std::string &rel, int flags, mode_t mode) const
{
	open_how how{};
	how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
	how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	long fd = syscall(SYS_openat2, root_, rel.c_str(), &how, sizeof(how));
	return static_cast<int>(fd);
}

Result<Share::Parent> Share::parent_of(const std::string &rel) const
{
	if (rel == ".")
		return make_error_code(Status::access_denied); /* the root has none here */
	size_t slash = rel.rfind('/');
	Parent p;
	std::string dir = slash == std::string::npos ? "." : rel.substr(0, slash);
	p.name = slash == std::string::npos ? rel : rel.substr(slash + 1);
	p.fd = open_beneath(dir, O_PATH | O_DIRECTORY);
	if (p.fd < 0)
		return make_error_code(errno == ENOENT ? Status::object_path_not_found
						       : status_from_errno(errno));
	return p;
}

uint64_t filetime_from(const struct timespec &ts)
{
	return filetime_unix_epoch + static_cast<uint64_t>(ts.tv_sec) * 10000000ULL +
	       static_cast<uint64_t>(ts.tv_nsec) / 100;
}

struct timespec timespec_from_filetime(uint64_t ft)
{
	struct timespec ts {};
	if (ft < filetime_unix_epoch)
		return ts;
	uint64_t t = ft - filetime_unix_epoch;
	ts.tv_sec = static_cast<time_t>(t / 10000000ULL);
	ts.tv_nsec = static_cast<long>(t % 10000000ULL) * 100;
	return ts;
}

uint32_t file_attributes(const struct stat &st)
{
	if (S_ISDIR(st.st_mode))
		return attribute_directory;
	return attribute_archive;
}

std::optional<Bytes> file_info(uint8_t info_class, const struct stat &st, std::string_view name,
			       uint32_t access, bool delete_pending)
{
	Writer w;
	switch (info_class) {
	case file_basic_information:
		put_basic(w, st);
		break;
	case file_standard_information:
		put_standard(w, st, delete_pending);
		break;
	case file_internal_information:
		w.le64(st.st_ino);
		break;
	case file_ea_information:
		w.le32(0);
		break;
	case file_access_information:
		w.le32(access);
		break;
	case file_position_information:
		w.le64(0);
		break;
	case file_mode_information:
		w.le32(0);
		break;
	case file_alignment_information:
		w.le32(0);
		break;
	case file_name_information: {
		Bytes n = utf16_or_empty(name);
		w.le32(static_cast<uint32_t>(n.size()));
		w.bytes(n);
		break;
	}
	case file_all_information: {
		put_basic(w, st);
		put_standard(w, st, delete_pending);
		w.le64(st.st_ino);
		w.le32(0);	/* EaSize */
		w.le32(access); /* AccessFlags */
		w.le64(0);	/* CurrentByteOffset */
		w.le32(0);	/* Mode */
		w.le32(0);	/* AlignmentRequirement */
		Bytes n = utf16_or_empty(name);
		w.le32(static_cast<uint32_t>(n.size()));
		w.bytes(n);
		break;
	}
	case file_network_open_information:
		put_times_sizes(w, st);
		w.le64(allocation_size(st));
		w.le64(S_ISDIR(st.st_mode) ? 0 : static_cast<uint64_t>(st.st_size));
		w.le32(file_attributes(st));
		w.le32(0);
		break;
	case file_attribute_tag_information:
		w.le32(file_attributes(st));
		w.le32(0);
		break;
	case file_stream_information: {
		if (S_ISDIR(st.st_mode))
			return Bytes{}; /* directories have no data stream */
		Bytes n = utf16_or_empty("::$DATA");
		w.le32(0);
		w.le32(static_cast<uint32_t>(n.size()));
		w.le64(static_cast<uint64_t>(st.st_size));
		w.le64(allocation_size(st));
		w.bytes(n);
		break;
	}
	default:
		return std::nullopt;
	}
	return w.take();
}

std::optional<Bytes> fs_info(uint8_t info_class, int fd)
{
	struct statvfs sv {};
	if (fstatvfs(fd, &sv) != 0)
		sv = {};
	const uint32_t sector = 512;
	uint32_t per_unit = sv.f_frsize >= sector ? static_cast<uint32_t>(sv.f_frsize / sector) : 8;
	Writer w;
	switch (info_class) {
	case fs_volume_information: {
		Bytes label = utf16_or_empty("share");
		w.le64(0);
		w.le32(static_cast<uint32_t>(sv.f_fsid));
		w.le32(static_cast<uint32_t>(label.size()));
		w.u8(0);
		w.u8(0);
		w.bytes(label);
		break;
	}
	case fs_size_information:
		w.le64(sv.f_blocks);
		w.le64(sv.f_bavail);
		w.le32(per_unit);
		w.le32(sector);
		break;
	case fs_device_information:
		w.le32(7); /* FILE_DEVICE_DISK */
		w.le32(0);
		break;
	case fs_attribute_information: {
		Bytes fs = utf16_or_empty("NTFS");
		/* FILE_CASE_SENSITIVE_SEARCH | FILE_CASE_PRESERVED_NAMES | FILE_UNICODE_ON_DISK */
		w.le32(0x7);
		w.le32(255);
		w.le32(static_cast<uint32_t>(fs.size()));
		w.bytes(fs);
		break;
	}
	case fs_full_size_information:
		w.le64(sv.f_blocks);
		w.le64(sv.f_bavail);
		w.le64(sv.f_bfree);
		w.le32(per_unit);
		w.le32(sector);
		break;
	case fs_sector_size_information:
		w.le32(sector);
		w.le32(sector);
		w.le32(sector);
		w.le32(sector);
		w.le32(0);
		w.le32(0);
		w.le32(0);
		break;
	default:
		return std::nullopt;
	}
	return w.take();
}

bool is_directory_class(uint8_t info_class)
{
	switch (info_class) {
	case file_directory_information:
	case file_full_directory_information:
	case file_both_directory_information:
	case file_names_information:
	case file_id_both_directory_information:
	case file_id_full_directory_information:
		return true;
	default:
		return false;
	}
}

Bytes directory_entry(uint8_t info_class, const struct stat &st, std::string_view name,
		      uint32_t file_index)
{
	Bytes n = utf16_or_empty(name);
	Writer w;
	w.le32(0); /* NextEntryOffset, set when the next entry follows */
	w.le32(file_index);
	if (info_class == file_names_information) {
		w.le32(static_cast<uint32_t>(n.size()));
		w.bytes(n);
		return w.take();
	}
	put_times_sizes(w, st);
	w.le64(S_ISDIR(st.st_mode) ? 0 : static_cast<uint64_t>(st.st_size));
	w.le64(allocation_size(st));
	w.le32(file_attributes(st));
	w.le32(static_cast<uint32_t>(n.size()));
	switch (info_class) {
	case file_full_directory_information:
		w.le32(0); /* EaSize */
		break;
	case file_id_full_directory_information:
		w.le32(0);
		w.le32(0);
		w.le64(st.st_ino);
		break;
	case file_both_directory_information:
		w.le32(0);
		w.u8(0);
		w.u8(0);
		w.zeros(24); /* no 8.3 short names */
		break;
	case file_id_both_directory_information:
		w.le32(0);
		w.u8(0);
		w.u8(0);
		w.zeros(24);
		w.le16(0);
		w.le64(st.st_ino);
		break;
	default:
		break;
	}
	w.bytes(n);
	return w.take();
}

bool pattern_matches(std::string_view pattern, std::string_view name)
{
	if (pattern == "*" || pattern.empty())
		return true;
	/* Iterative '*' matching with one backtrack point. */
	size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
	auto eq = [](char a, char b) {
		return std::tolower(static_cast<unsigned char>(a)) ==
		       std::tolower(static_cast<unsigned char>(b));
	};
	while (n < name.size()) {
		if (p < pattern.size() && (pattern[p] == '?' || eq(pattern[p], name[n]))) {
			p++;
			n++;
		} else if (p < pattern.size() && pattern[p] == '*') {
			star = p++;
			mark = n;
		} else if (star != std::string_view::npos) {
			p = star + 1;
			n = ++mark;
		} else {
			return false;
		}
	}
	while (p < pattern.size() && pattern[p] == '*')
		p++;
	return p == pattern.size();
}

} // namespace smb2
