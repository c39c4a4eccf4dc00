// SPDX-License-Identifier: GPL-2.0
/*
 * Test-build-only debugfs hooks of af_smbdirect.
 *
 * af_smbdirect/test_kasan_oob: writing to it reads one byte past the end of
 * a 16-byte allocation. The VM harness does this after collecting the real
 * verdict, and requires a KASAN report naming this module: a run whose
 * detector is dead must not pass.
 *
 * af_smbdirect/test_rx_delay_ms, test_disconnect_delay_ms,
 * test_request_delay_ms, test_requests_delayed, test_route_delay_ms,
 * test_route_delayed, test_negotiate_timeout_ms, test_dereg_delay_ms,
 * test_dereg_delayed, test_release_delay_ms, test_release_delayed,
 * test_live_key_unmaps, test_repost_enotconn, test_sockets_walked,
 * test_rw_post_fail, test_rw_post_whole, test_rw_posted_part: see
 * test_hooks.h.
 */
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/slab.h>

#include "test_hooks.h"

static struct dentry *af_smbdirect_test_dir;

u32 af_smbdirect_test_rx_delay_ms;
u32 af_smbdirect_test_disconnect_delay_ms;
u32 af_smbdirect_test_request_delay_ms;
atomic_t af_smbdirect_test_requests_delayed = ATOMIC_INIT(0);
u32 af_smbdirect_test_route_delay_ms;
u32 af_smbdirect_test_route_delayed;
u32 af_smbdirect_test_negotiate_timeout_ms;
u32 af_smbdirect_test_dereg_delay_ms;
atomic_t af_smbdirect_test_dereg_delayed = ATOMIC_INIT(0);
u32 af_smbdirect_test_release_delay_ms;
atomic_t af_smbdirect_test_release_delayed = ATOMIC_INIT(0);
atomic_t af_smbdirect_test_live_key_unmaps = ATOMIC_INIT(0);
atomic_t af_smbdirect_test_repost_enotconn = ATOMIC_INIT(0);
atomic_t af_smbdirect_test_sockets_walked = ATOMIC_INIT(0);
atomic_t af_smbdirect_test_rw_post_fail = ATOMIC_INIT(0);
atomic_t af_smbdirect_test_rw_post_whole = ATOMIC_INIT(0);
atomic_t af_smbdirect_test_rw_posted_part = ATOMIC_INIT(0);

static noinline u8 af_smbdirect_test_oob_read(const u8 *p, size_t i)
{
	return READ_ONCE(p[i]);
}

static ssize_t kasan_oob_write(struct file *file, const char __user *buf,
			       size_t len, loff_t *ppos)
{
	size_t size = 16;
	u8 *p = kmalloc(size, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	OPTIMIZER_HIDE_VAR(size);
	pr_info("af_smbdirect: test hook: deliberate out-of-bounds read %u\n",
		af_smbdirect_test_oob_read(p, size));
	kfree(p);
	return len;
}

static const struct file_operations kasan_oob_fops = {
	.owner = THIS_MODULE,
	.write = kasan_oob_write,
};

void af_smbdirect_test_hooks_init(void)
{
	af_smbdirect_test_dir = debugfs_create_dir("af_smbdirect", NULL);
	debugfs_create_file("test_kasan_oob", 0200, af_smbdirect_test_dir, NULL,
			    &kasan_oob_fops);
	debugfs_create_u32("test_rx_delay_ms", 0600, af_smbdirect_test_dir,
			   &af_smbdirect_test_rx_delay_ms);
	debugfs_create_u32("test_disconnect_delay_ms", 0600, af_smbdirect_test_dir,
			   &af_smbdirect_test_disconnect_delay_ms);
	debugfs_create_u32("test_request_delay_ms", 0600, af_smbdirect_test_dir,
			   &af_smbdirect_test_request_delay_ms);
	debugfs_create_atomic_t("test_requests_delayed", 0400, af_smbdirect_test_dir,
				&af_smbdirect_test_requests_delayed);
	debugfs_create_u32("test_route_delay_ms", 0600, af_smbdirect_test_dir,
			   &af_smbdirect_test_route_delay_ms);
	debugfs_create_u32("test_route_delayed", 0400, af_smbdirect_test_dir,
			   &af_smbdirect_test_route_delayed);
	debugfs_create_u32("test_negotiate_timeout_ms", 0600, af_smbdirect_test_dir,
			   &af_smbdirect_test_negotiate_timeout_ms);
	debugfs_create_u32("test_dereg_delay_ms", 0600, af_smbdirect_test_dir,
			   &af_smbdirect_test_dereg_delay_ms);
	debugfs_create_atomic_t("test_dereg_delayed", 0400, af_smbdirect_test_dir,
				&af_smbdirect_test_dereg_delayed);
	debugfs_create_u32("test_release_delay_ms", 0600, af_smbdirect_test_dir,
			   &af_smbdirect_test_release_delay_ms);
	debugfs_create_atomic_t("test_release_delayed", 0400, af_smbdirect_test_dir,
				&af_smbdirect_test_release_delayed);
	debugfs_create_atomic_t("test_live_key_unmaps", 0400, af_smbdirect_test_dir,
				&af_smbdirect_test_live_key_unmaps);
	debugfs_create_atomic_t("test_repost_enotconn", 0600, af_smbdirect_test_dir,
				&af_smbdirect_test_repost_enotconn);
	debugfs_create_atomic_t("test_sockets_walked", 0600, af_smbdirect_test_dir,
				&af_smbdirect_test_sockets_walked);
	debugfs_create_atomic_t("test_rw_post_fail", 0600, af_smbdirect_test_dir,
				&af_smbdirect_test_rw_post_fail);
	debugfs_create_atomic_t("test_rw_post_whole", 0600, af_smbdirect_test_dir,
				&af_smbdirect_test_rw_post_whole);
	debugfs_create_atomic_t("test_rw_posted_part", 0600, af_smbdirect_test_dir,
				&af_smbdirect_test_rw_posted_part);
}

void af_smbdirect_test_hooks_exit(void)
{
	debugfs_remove_recursive(af_smbdirect_test_dir);
}
