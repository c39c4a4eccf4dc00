// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA layout arithmetic; no I/O, no locks, no allocation (see
 * sd_layout.h). Every sum is checked before it is used.
 */
#include <linux/errno.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>

#include "sd_layout.h"

int sd_iov_total(const struct iovec *iov, u32 nr, u64 max, u64 *total)
{
	u64 sum = 0, end;
	u32 i;

	/* Too many bytes is EMSGSIZE even when the segment also wraps. */
	for (i = 0; i < nr; i++) {
		if (check_add_overflow(sum, (u64)iov[i].iov_len, &sum) || sum > max)
			return -EMSGSIZE;
		if (check_add_overflow((u64)(unsigned long)iov[i].iov_base,
				       (u64)iov[i].iov_len, &end) ||
		    end > (u64)ULONG_MAX)
			return -EFAULT;
	}
	*total = sum;
	return 0;
}

u64 sd_iov_next_piece(struct sd_iov_cursor *c, u64 max, unsigned long *addr)
{
	u64 len;

	while (c->idx < c->nr && c->off >= c->iov[c->idx].iov_len) {
		c->idx++;
		c->off = 0;
	}
	if (c->idx >= c->nr || !max)
		return 0;
	*addr = (unsigned long)c->iov[c->idx].iov_base + c->off;
	len = min_t(u64, c->iov[c->idx].iov_len - c->off, max);
	c->off += len;
	return len;
}

u64 sd_iov_next_region(struct sd_iov_cursor *c, u32 max_pages, u64 max_bytes,
		       u32 *pages)
{
	u64 bytes = 0, len, room;
	struct sd_iov_cursor save;
	unsigned long addr;
	u32 used = 0, first;

	while (bytes < max_bytes && used < max_pages) {
		save = *c;
		len = sd_iov_next_piece(c, max_bytes - bytes, &addr);
		if (!len)
			break;
		first = offset_in_page(addr);
		/* A piece after the first must start on a page boundary. */
		if (bytes && first) {
			*c = save;
			break;
		}
		/* Bytes the remaining page budget can hold from this offset. */
		room = (u64)(max_pages - used) * PAGE_SIZE - first;
		if (len > room) {
			c->off -= len - room;
			len = room;
		}
		used += DIV_ROUND_UP(first + len, PAGE_SIZE);
		bytes += len;
		/* A piece that ends inside a page must be the last. */
		if (offset_in_page(addr + len))
			break;
	}
	*pages = used;
	return bytes;
}

int sd_desc_check(const struct smbdirect_buffer_descriptor_v1 *d, u32 nr,
		  u64 *total)
{
	u64 sum = 0, end;
	u32 i;

	for (i = 0; i < nr; i++) {
		if (!le32_to_cpu(d[i].length) ||
		    check_add_overflow(le64_to_cpu(d[i].offset),
				       (u64)le32_to_cpu(d[i].length), &end) ||
		    check_add_overflow(sum, (u64)le32_to_cpu(d[i].length), &sum))
			return -EINVAL;
	}
	*total = sum;
	return 0;
}

u64 sd_file_region(u64 pos, u64 max_bytes, u32 max_pages, u32 *pages)
{
	u64 first = offset_in_page(pos);
	u64 bytes = min_t(u64, max_bytes, (u64)max_pages * PAGE_SIZE - first);

	if (!max_pages || !max_bytes) {
		*pages = 0;
		return 0;
	}
	*pages = DIV_ROUND_UP(first + bytes, PAGE_SIZE);
	return bytes;
}
