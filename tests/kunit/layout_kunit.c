// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the RDMA layout arithmetic of kernel/sd_layout.c, which decides
 * how user memory is cut into MRs and rdma_rw contexts and rejects bad
 * iovec and descriptor lists before anything is pinned.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/mm.h>

#include "sd_layout.h"

#define P PAGE_SIZE
#define IOV(a, l) { .iov_base = (void __user *)(unsigned long)(a), .iov_len = (l) }

/* Every region of the list, as (bytes, pages) pairs; returns the count. */
static int regions(const struct iovec *iov, u32 nr, u32 max_pages, u64 max_bytes,
		   u64 *bytes, u32 *pages, int room)
{
	struct sd_iov_cursor c;
	int n = 0;
	u64 b;
	u32 p;

	sd_iov_cursor_init(&c, iov, nr);
	while ((b = sd_iov_next_region(&c, max_pages, max_bytes, &p))) {
		if (n < room) {
			bytes[n] = b;
			pages[n] = p;
		}
		n++;
	}
	return n;
}

static void layout_total(struct kunit *test)
{
	struct iovec ok[] = { IOV(0x10000, 100), IOV(0x20000, 0), IOV(0x30000, 28) };
	struct iovec wrap[] = { IOV(ULONG_MAX - 10, 11) };
	struct iovec edge[] = { IOV(ULONG_MAX - 10, 10) };
	struct iovec big[] = { IOV(0x1000, ULONG_MAX / 2), IOV(0x1000, ULONG_MAX / 2),
			       IOV(0x1000, 4) };
	u64 total = 7;

	KUNIT_EXPECT_EQ(test, 0, sd_iov_total(ok, 3, 128, &total));
	KUNIT_EXPECT_EQ(test, 128ULL, total);
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, sd_iov_total(ok, 3, 127, &total));
	KUNIT_EXPECT_EQ(test, -EFAULT, sd_iov_total(wrap, 1, U64_MAX, &total));
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, sd_iov_total(wrap, 1, 10, &total));
	KUNIT_EXPECT_EQ(test, 0, sd_iov_total(edge, 1, U64_MAX, &total));
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, sd_iov_total(big, 3, U64_MAX / 2, &total));
	KUNIT_EXPECT_EQ(test, 0, sd_iov_total(ok, 0, 0, &total));
	KUNIT_EXPECT_EQ(test, 0ULL, total);
}

/* One aligned segment: cut only by the page budget and the byte limit. */
static void layout_aligned_budget(struct kunit *test)
{
	struct iovec one[] = { IOV(16 * P, 10 * P) };
	u64 b[8];
	u32 p[8];

	KUNIT_ASSERT_EQ(test, 3, regions(one, 1, 4, U32_MAX, b, p, 8));
	KUNIT_EXPECT_EQ(test, (u64)4 * P, b[0]);
	KUNIT_EXPECT_EQ(test, 4U, p[0]);
	KUNIT_EXPECT_EQ(test, (u64)4 * P, b[1]);
	KUNIT_EXPECT_EQ(test, (u64)2 * P, b[2]);
	KUNIT_EXPECT_EQ(test, 2U, p[2]);
	KUNIT_ASSERT_EQ(test, 4, regions(one, 1, 100, 3 * P - 5, b, p, 8));
	KUNIT_EXPECT_EQ(test, (u64)3 * P - 5, b[0]);
	KUNIT_EXPECT_EQ(test, 3U, p[0]);
	/* The second starts 5 bytes before a page end: it spans 4 pages. */
	KUNIT_EXPECT_EQ(test, 4U, p[1]);
}

/* An unaligned start spends part of a page: one more page, fewer bytes. */
static void layout_unaligned(struct kunit *test)
{
	struct iovec one[] = { IOV(16 * P + 100, 4 * P) };
	u64 b[4];
	u32 p[4];

	KUNIT_ASSERT_EQ(test, 2, regions(one, 1, 4, U32_MAX, b, p, 4));
	KUNIT_EXPECT_EQ(test, (u64)4 * P - 100, b[0]);
	KUNIT_EXPECT_EQ(test, 4U, p[0]);
	KUNIT_EXPECT_EQ(test, 100ULL, b[1]);
	KUNIT_EXPECT_EQ(test, 1U, p[1]);
	/* A one-byte buffer is one region of one page. */
	one[0].iov_len = 1;
	KUNIT_ASSERT_EQ(test, 1, regions(one, 1, 4, U32_MAX, b, p, 4));
	KUNIT_EXPECT_EQ(test, 1ULL, b[0]);
	KUNIT_EXPECT_EQ(test, 1U, p[0]);
}

/* Segments join only where one ends and the next starts on page boundaries. */
static void layout_gaps(struct kunit *test)
{
	struct iovec joined[] = { IOV(10 * P + 8, P - 8), IOV(40 * P, 2 * P),
				  IOV(90 * P, 10) };
	struct iovec split[] = { IOV(10 * P, P + 1), IOV(40 * P, P),
				 IOV(50 * P + 1, P) };
	struct iovec empty[] = { IOV(0x1000, 0), IOV(7 * P, 3), IOV(0, 0) };
	u64 b[4];
	u32 p[4];

	KUNIT_ASSERT_EQ(test, 1, regions(joined, 3, 100, U32_MAX, b, p, 4));
	KUNIT_EXPECT_EQ(test, (u64)3 * P + 10 - 8, b[0]);
	KUNIT_EXPECT_EQ(test, 4U, p[0]);
	/* Ends mid-page, then starts on a page, then starts mid-page. */
	KUNIT_ASSERT_EQ(test, 3, regions(split, 3, 100, U32_MAX, b, p, 4));
	KUNIT_EXPECT_EQ(test, (u64)P + 1, b[0]);
	KUNIT_EXPECT_EQ(test, 2U, p[0]);
	KUNIT_EXPECT_EQ(test, (u64)P, b[1]);
	KUNIT_EXPECT_EQ(test, (u64)P, b[2]);
	KUNIT_EXPECT_EQ(test, 2U, p[2]);
	KUNIT_ASSERT_EQ(test, 1, regions(empty, 3, 100, U32_MAX, b, p, 4));
	KUNIT_EXPECT_EQ(test, 3ULL, b[0]);
	KUNIT_ASSERT_EQ(test, 0, regions(empty, 1, 100, U32_MAX, b, p, 4));
}

/* Regions cover every byte exactly once, in order. */
static void layout_covers_everything(struct kunit *test)
{
	struct iovec iov[37];
	struct sd_iov_cursor c, piece;
	unsigned long addr, expect_addr;
	u64 total = 0, seen = 0, b, len;
	u32 i, p, seg = 0;

	for (i = 0; i < ARRAY_SIZE(iov); i++) {
		iov[i].iov_base = (void __user *)(unsigned long)(0x100000 * (i + 1) + 7 * i);
		iov[i].iov_len = 1000 + 997 * i;
		total += iov[i].iov_len;
	}
	sd_iov_cursor_init(&c, iov, ARRAY_SIZE(iov));
	expect_addr = (unsigned long)iov[0].iov_base;
	for (;;) {
		piece = c;
		b = sd_iov_next_region(&c, 3, 5000, &p);
		if (!b)
			break;
		KUNIT_EXPECT_LE(test, b, 5000ULL);
		KUNIT_EXPECT_LE(test, p, 3U);
		while (b) {
			len = sd_iov_next_piece(&piece, b, &addr);
			KUNIT_ASSERT_NE(test, 0ULL, len);
			if (addr != expect_addr) {
				seg++;
				KUNIT_ASSERT_LT(test, seg, (u32)ARRAY_SIZE(iov));
				expect_addr = (unsigned long)iov[seg].iov_base;
			}
			KUNIT_EXPECT_EQ(test, expect_addr, addr);
			expect_addr += len;
			seen += len;
			b -= len;
		}
	}
	KUNIT_EXPECT_EQ(test, total, seen);
	KUNIT_EXPECT_EQ(test, (u32)ARRAY_SIZE(iov) - 1, seg);
}

static void layout_descriptors(struct kunit *test)
{
	struct smbdirect_buffer_descriptor_v1 d[3] = {
		{ cpu_to_le64(0x1000), cpu_to_le32(1), cpu_to_le32(4096) },
		{ cpu_to_le64(U64_MAX - 4096), cpu_to_le32(2), cpu_to_le32(4096) },
		{ cpu_to_le64(7), cpu_to_le32(3), cpu_to_le32(U32_MAX) },
	};
	u64 total = 0;

	KUNIT_EXPECT_EQ(test, 0, sd_desc_check(d, 3, &total));
	KUNIT_EXPECT_EQ(test, 4096ULL + 4096 + U32_MAX, total);
	d[1].length = cpu_to_le32(4097);
	KUNIT_EXPECT_EQ(test, -EINVAL, sd_desc_check(d, 3, &total));
	d[1].length = cpu_to_le32(1);
	d[2].length = 0;
	KUNIT_EXPECT_EQ(test, -EINVAL, sd_desc_check(d, 3, &total));
	KUNIT_EXPECT_EQ(test, 0, sd_desc_check(d, 2, &total));
	KUNIT_EXPECT_EQ(test, 4097ULL, total);
}

/*
 * File chunks (the page cache side of SMBDIRECT_RDMA_F_FILE): bounded by
 * the page budget from the first byte's offset in its page, and by the
 * bytes; the pages are those the bytes span.
 */
static void layout_file_region(struct kunit *test)
{
	u32 pages = 99;

	KUNIT_EXPECT_EQ(test, 4 * P, sd_file_region(0, 100 * P, 4, &pages));
	KUNIT_EXPECT_EQ(test, 4U, pages);
	KUNIT_EXPECT_EQ(test, 4 * P - 1, sd_file_region(8 * P + 1, 100 * P, 4, &pages));
	KUNIT_EXPECT_EQ(test, 4U, pages);
	KUNIT_EXPECT_EQ(test, 1ULL, sd_file_region(P - 1, 1, 4, &pages));
	KUNIT_EXPECT_EQ(test, 1U, pages);
	KUNIT_EXPECT_EQ(test, 2ULL, sd_file_region(P - 1, 2, 4, &pages));
	KUNIT_EXPECT_EQ(test, 2U, pages);
	KUNIT_EXPECT_EQ(test, P + 2, sd_file_region(3 * P - 1, P + 2, 256, &pages));
	KUNIT_EXPECT_EQ(test, 3U, pages);
	KUNIT_EXPECT_EQ(test, 0ULL, sd_file_region(5, 0, 4, &pages));
	KUNIT_EXPECT_EQ(test, 0U, pages);
	KUNIT_EXPECT_EQ(test, 0ULL, sd_file_region(5, 10, 0, &pages));
	/* Offsets beyond 4 GiB keep their page offset. */
	KUNIT_EXPECT_EQ(test, P - 7, sd_file_region((5ULL << 32) + 7, 10 * P, 1, &pages));
	KUNIT_EXPECT_EQ(test, 1U, pages);
}

static struct kunit_case layout_cases[] = {
	KUNIT_CASE(layout_total),
	KUNIT_CASE(layout_aligned_budget),
	KUNIT_CASE(layout_unaligned),
	KUNIT_CASE(layout_gaps),
	KUNIT_CASE(layout_covers_everything),
	KUNIT_CASE(layout_descriptors),
	KUNIT_CASE(layout_file_region),
	{}
};

static struct kunit_suite layout_suite = {
	.name = "af_smbdirect_layout",
	.test_cases = layout_cases,
};

kunit_test_suite(layout_suite);
