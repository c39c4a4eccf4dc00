/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Errors are values: every fallible core function returns Errc or
 * Result<T>, both [[nodiscard]], so an ignored failure does not compile.
 */
#ifndef SD_CORE_RESULT_H
#define SD_CORE_RESULT_H

#include "smbdirect_core.h"
#include "types.h"

namespace sd
{

/* The C header's codes are the single source of truth for the numbers. */
/* clang-format 14 mangles an attributed enum-base. */
// clang-format off
enum class [[nodiscard]] Errc : i32 {
	// clang-format on
	ok = SD_CORE_OK,
	again = SD_CORE_E_AGAIN,
	invalid_argument = SD_CORE_E_INVALID_ARGUMENT,
	bad_state = SD_CORE_E_BAD_STATE,
	buffer_too_small = SD_CORE_E_BUFFER_TOO_SMALL,
	truncated = SD_CORE_E_TRUNCATED,
	pdu_too_long = SD_CORE_E_PDU_TOO_LONG,
	version = SD_CORE_E_VERSION,
	zero_credits_requested = SD_CORE_E_ZERO_CREDITS_REQUESTED,
	zero_credits_granted = SD_CORE_E_ZERO_CREDITS_GRANTED,
	fragmented_size_too_small = SD_CORE_E_FRAGMENTED_SIZE_TOO_SMALL,
	receive_size_too_small = SD_CORE_E_RECEIVE_SIZE_TOO_SMALL,
	send_size_exceeds_receive = SD_CORE_E_SEND_SIZE_EXCEEDS_RECEIVE,
	peer_status = SD_CORE_E_PEER_STATUS,
	data_offset_alignment = SD_CORE_E_DATA_OFFSET_ALIGNMENT,
	data_offset_range = SD_CORE_E_DATA_OFFSET_RANGE,
	data_out_of_bounds = SD_CORE_E_DATA_OUT_OF_BOUNDS,
	remaining_mismatch = SD_CORE_E_REMAINING_MISMATCH,
	message_too_long = SD_CORE_E_MESSAGE_TOO_LONG,
	empty_fragment = SD_CORE_E_EMPTY_FRAGMENT,
	no_credit = SD_CORE_E_NO_CREDIT,
	credit_overflow = SD_CORE_E_CREDIT_OVERFLOW,
	empty_message = SD_CORE_E_EMPTY_MESSAGE,
	busy = SD_CORE_E_BUSY,
	no_receive_posted = SD_CORE_E_NO_RECEIVE_POSTED,
	too_many_receives = SD_CORE_E_TOO_MANY_RECEIVES,
	config = SD_CORE_E_CONFIG,
};

[[nodiscard]] constexpr int to_c(Errc e)
{
	return static_cast<int>(e);
}

/* A value or an error, never both; T must be trivially copyable. */
template <typename T> class [[nodiscard]] Result {
    public:
	constexpr Result(T value) : value_(value), err_(Errc::ok)
	{
	}
	constexpr Result(Errc err) : value_(), err_(err)
	{
	}

	[[nodiscard]] constexpr bool ok() const
	{
		return err_ == Errc::ok;
	}
	[[nodiscard]] constexpr Errc error() const
	{
		return err_;
	}
	/* Callers check ok() first; a wrong access yields a zero value. */
	[[nodiscard]] constexpr const T &value() const
	{
		return value_;
	}

    private:
	T value_;
	Errc err_;
};

} // namespace sd

/* Early return of an Errc from a function that itself returns Errc/Result. */
#define SD_TRY(expr)                                                                               \
	do {                                                                                       \
		const ::sd::Errc sd_try_err_ = (expr);                                             \
		if (sd_try_err_ != ::sd::Errc::ok)                                                 \
			return sd_try_err_;                                                        \
	} while (0)

#endif
