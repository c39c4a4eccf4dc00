/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure arithmetic of RDMA layouts (tested by tests/kunit/glue_kunit.c):
 * checking iovec and descriptor lists, and cutting an iovec list into
 * regions one fast-registration MR (or one rdma_rw context) can map.
 */
#ifndef AF_SMBDIRECT_LAYOUT_H
#define AF_SMBDIRECT_LAYOUT_H

#include <linux/types.h>
#include <linux/uio.h>

#include "uapi/linux/smbdirect.h"

/* A position in an iovec list (kernel copy of the user's array). */
struct sd_iov_cursor {
	const struct iovec *iov;
	u32 nr;
	u32 idx;
	u64 off;	/* bytes of iov[idx] already passed */
};

static inline void sd_iov_cursor_init(struct sd_iov_cursor *c,
				      const struct iovec *iov, u32 nr)
{
	c->iov = iov;
	c->nr = nr;
	c->idx = 0;
	c->off = 0;
}

/*
 * Sums the segment lengths into *total: -EMSGSIZE if the sum overflows or
 * exceeds max, -EFAULT if a segment wraps around the address space.
 */
int sd_iov_total(const struct iovec *iov, u32 nr, u64 max, u64 *total);

/*
 * The next piece at the cursor: a contiguous user range inside one
 * segment (zero-length segments skipped), at most max bytes. Advances the
 * cursor; returns the length, 0 at the end.
 */
u64 sd_iov_next_piece(struct sd_iov_cursor *c, u64 max, unsigned long *addr);

/*
 * The next region at the cursor: at most max_bytes bytes and max_pages
 * pages, in which every piece but the first starts on a page boundary and
 * every piece but the last ends on one (what one MR's page list can
 * describe). Advances the cursor; returns the bytes, 0 at the end, and the
 * pages it spans in *pages.
 */
u64 sd_iov_next_region(struct sd_iov_cursor *c, u32 max_pages, u64 max_bytes,
		       u32 *pages);

/*
 * A chunk of a file range starting at byte pos: at most max_bytes bytes
 * and max_pages pages of the page cache. Returns the bytes (0 only for
 * max_bytes or max_pages 0) and the pages they span in *pages.
 */
u64 sd_file_region(u64 pos, u64 max_bytes, u32 max_pages, u32 *pages);

/*
 * Checks descriptors: a zero length or an offset + length that overflows
 * is -EINVAL. The sum of the lengths goes to *total.
 */
int sd_desc_check(const struct smbdirect_buffer_descriptor_v1 *d, u32 nr,
		  u64 *total);

#endif
