// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Errors of the SMB2 examples as std::error_code values:
 *  - NTSTATUS codes a peer returned (smb2::Status, category "ntstatus");
 *  - what is wrong with bytes a peer sent (smb2::ParseError, "smb2-parse");
 *  - errno from the socket and the RDMA calls (std::system_category()).
 * Result<T> carries a value or one of them; nothing throws.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_STATUS_HPP
#define SMBDIRECT_EXAMPLES_SMB2_STATUS_HPP

#include <cstdint>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

#include <smbdirect/smbdirect.hpp>

namespace smb2 {

/* The NTSTATUS values these examples produce or react to ([MS-ERREF] 2.3). */
enum class Status : uint32_t {
	success = 0x00000000,
	pending = 0x00000103,
	buffer_overflow = 0x80000005,
	no_more_files = 0x80000006,
	not_implemented = 0xC0000002,
	invalid_info_class = 0xC0000003,
	info_length_mismatch = 0xC0000004,
	invalid_handle = 0xC0000008,
	invalid_parameter = 0xC000000D,
	no_such_file = 0xC000000F,
	invalid_device_request = 0xC0000010,
	end_of_file = 0xC0000011,
	more_processing_required = 0xC0000016,
	access_denied = 0xC0000022,
	buffer_too_small = 0xC0000023,
	object_name_invalid = 0xC0000033,
	object_name_not_found = 0xC0000034,
	object_name_collision = 0xC0000035,
	object_path_not_found = 0xC000003A,
	sharing_violation = 0xC0000043,
	delete_pending = 0xC0000056,
	logon_failure = 0xC000006D,
	disk_full = 0xC000007F,
	insufficient_resources = 0xC000009A,
	file_is_a_directory = 0xC00000BA,
	not_supported = 0xC00000BB,
	network_name_deleted = 0xC00000C9,
	bad_network_name = 0xC00000CC,
	request_not_accepted = 0xC00000D0,
	directory_not_empty = 0xC0000101,
	not_a_directory = 0xC0000103,
	cancelled = 0xC0000120,
	file_closed = 0xC0000128,
	user_session_deleted = 0xC0000203,
	not_found = 0xC0000225,
};

const std::error_category &ntstatus_category();
std::error_code make_error_code(Status s);
/* "STATUS_ACCESS_DENIED" or "NTSTATUS 0x...". */
std::string status_name(uint32_t status);

/* What is wrong with bytes a peer sent. */
enum class ParseError {
	truncated = 1,		/* shorter than its structure */
	bad_protocol_id,	/* not 0xFE 'S' 'M' 'B' */
	bad_structure_size,	/* StructureSize of another message */
	bad_offset,		/* an offset/length pair outside the message */
	unexpected_message,	/* another command, message id or direction */
	bad_value,		/* a field value the protocol does not allow */
	bad_ntlmssp,		/* NTLMSSP signature, type or field */
	too_large,		/* above a limit we set */
	compound,		/* a compounded message where none was sent */
	bad_signature,		/* a signature that does not verify */
	unsigned_message,	/* no signature where the session signs */
};

const std::error_category &parse_category();
std::error_code make_error_code(ParseError e);

template <class T> class [[nodiscard]] Result {
public:
	Result(T value) : v_(std::move(value))
	{
	}
	Result(std::error_code ec) : v_(ec)
	{
	}
	template <class E,
		  std::enable_if_t<std::is_error_code_enum_v<E>, int> = 0>
	Result(E e) : v_(make_error_code(e))
	{
	}

	explicit operator bool() const
	{
		return v_.index() == 0;
	}
	T &operator*()
	{
		return std::get<0>(v_);
	}
	const T &operator*() const
	{
		return std::get<0>(v_);
	}
	T *operator->()
	{
		return &std::get<0>(v_);
	}
	const T *operator->() const
	{
		return &std::get<0>(v_);
	}
	std::error_code error() const
	{
		return v_.index() == 1 ? std::get<1>(v_) : std::error_code();
	}

private:
	std::variant<T, std::error_code> v_;
};

/* -errno (libsmbdirect's convention) as an error_code. */
using sd::errno_code;

} // namespace smb2

template <> struct std::is_error_code_enum<smb2::Status> : std::true_type {};
template <> struct std::is_error_code_enum<smb2::ParseError> : std::true_type {};

#endif
