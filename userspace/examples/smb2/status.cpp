// SPDX-License-Identifier: LGPL-2.1-or-later
#include "status.hpp"

#include <cstdio>

namespace smb2 {

namespace {

struct StatusName {
	Status status;
	const char *name;
};

constexpr StatusName status_names[] = {
	{ Status::success, "STATUS_SUCCESS" },
	{ Status::pending, "STATUS_PENDING" },
	{ Status::buffer_overflow, "STATUS_BUFFER_OVERFLOW" },
	{ Status::no_more_files, "STATUS_NO_MORE_FILES" },
	{ Status::not_implemented, "STATUS_NOT_IMPLEMENTED" },
	{ Status::invalid_info_class, "STATUS_INVALID_INFO_CLASS" },
	{ Status::info_length_mismatch, "STATUS_INFO_LENGTH_MISMATCH" },
	{ Status::invalid_handle, "STATUS_INVALID_HANDLE" },
	{ Status::invalid_parameter, "STATUS_INVALID_PARAMETER" },
	{ Status::no_such_file, "STATUS_NO_SUCH_FILE" },
	{ Status::invalid_device_request, "STATUS_INVALID_DEVICE_REQUEST" },
	{ Status::end_of_file, "STATUS_END_OF_FILE" },
	{ Status::more_processing_required, "STATUS_MORE_PROCESSING_REQUIRED" },
	{ Status::access_denied, "STATUS_ACCESS_DENIED" },
	{ Status::buffer_too_small, "STATUS_BUFFER_TOO_SMALL" },
	{ Status::object_name_invalid, "STATUS_OBJECT_NAME_INVALID" },
	{ Status::object_name_not_found, "STATUS_OBJECT_NAME_NOT_FOUND" },
	{ Status::object_name_collision, "STATUS_OBJECT_NAME_COLLISION" },
	{ Status::object_path_not_found, "STATUS_OBJECT_PATH_NOT_FOUND" },
	{ Status::sharing_violation, "STATUS_SHARING_VIOLATION" },
	{ Status::delete_pending, "STATUS_DELETE_PENDING" },
	{ Status::logon_failure, "STATUS_LOGON_FAILURE" },
	{ Status::disk_full, "STATUS_DISK_FULL" },
	{ Status::insufficient_resources, "STATUS_INSUFFICIENT_RESOURCES" },
	{ Status::file_is_a_directory, "STATUS_FILE_IS_A_DIRECTORY" },
	{ Status::not_supported, "STATUS_NOT_SUPPORTED" },
	{ Status::network_name_deleted, "STATUS_NETWORK_NAME_DELETED" },
	{ Status::bad_network_name, "STATUS_BAD_NETWORK_NAME" },
	{ Status::request_not_accepted, "STATUS_REQUEST_NOT_ACCEPTED" },
	{ Status::directory_not_empty, "STATUS_DIRECTORY_NOT_EMPTY" },
	{ Status::not_a_directory, "STATUS_NOT_A_DIRECTORY" },
	{ Status::cancelled, "STATUS_CANCELLED" },
	{ Status::file_closed, "STATUS_FILE_CLOSED" },
	{ Status::user_session_deleted, "STATUS_USER_SESSION_DELETED" },
	{ Status::not_found, "STATUS_NOT_FOUND" },
};

class NtstatusCategory : public std::error_category {
public:
	const char *name() const noexcept override
	{
		return "ntstatus";
	}
	std::string message(int value) const override
	{
		return status_name(static_cast<uint32_t>(value));
	}
};

class ParseCategory : public std::error_category {
public:
	const char *name() const noexcept override
	{
		return "smb2-parse";
	}
	std::string message(int value) const override
	{
		switch (static_cast<ParseError>(value)) {
		case ParseError::truncated:
			return "message truncated";
		case ParseError::bad_protocol_id:
			return "not an SMB2 message";
		case ParseError::bad_structure_size:
			return "wrong StructureSize";
		case ParseError::bad_offset:
			return "offset or length outside the message";
		case ParseError::unexpected_message:
			return "unexpected message";
		case ParseError::bad_value:
			return "field value not allowed";
		case ParseError::bad_ntlmssp:
			return "malformed NTLMSSP message";
		case ParseError::too_large:
			return "message too large";
		case ParseError::compound:
			return "unexpected compounded message";
		case ParseError::bad_signature:
			return "bad signature";
		case ParseError::unsigned_message:
			return "unsigned message where the session signs";
		}
		return "unknown parse error";
	}
};

} // namespace

const std::error_category &ntstatus_category()
{
	static const NtstatusCategory category;
	return category;
}

const std::error_category &parse_category()
{
	static const ParseCategory category;
	return category;
}

std::error_code make_error_code(Status s)
{
	return { static_cast<int>(s), ntstatus_category() };
}

std::error_code make_error_code(ParseError e)
{
	return { static_cast<int>(e), parse_category() };
}

std::string status_name(uint32_t status)
{
	for (const auto &n : status_names)
		if (static_cast<uint32_t>(n.status) == status)
			return n.name;
	char buf[32];
	std::snprintf(buf, sizeof(buf), "NTSTATUS 0x%08x", status);
	return buf;
}

} // namespace smb2
