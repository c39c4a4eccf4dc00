// SPDX-License-Identifier: GPL-2.0
/*
 * Device removal. rdma_cm would only tell each id on its own, from inside
 * its handler where the id cannot be destroyed; as an ib_client registered
 * after rdma_cm we are called first, while the device is still whole, and
 * can tear every socket on it down synchronously. Their users then see
 * ENETDOWN.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <rdma/ib_verbs.h>

#include "sd_sock.h"

static DEFINE_MUTEX(sd_list_mutex);
static LIST_HEAD(sd_list);

void sd_list_add(struct sd_sock *sd)
{
	mutex_lock(&sd_list_mutex);
	list_add_tail(&sd->dev_node, &sd_list);
	mutex_unlock(&sd_list_mutex);
}

void sd_list_del(struct sd_sock *sd)
{
	mutex_lock(&sd_list_mutex);
	list_del_init(&sd->dev_node);
	mutex_unlock(&sd_list_mutex);
}

static int sd_device_add(struct ib_device *dev)
{
	return 0;
}

static void sd_device_remove(struct ib_device *dev, void *client_data)
{
	struct sd_sock *sd, *tmp;
	LIST_HEAD(batch);

	mutex_lock(&sd_list_mutex);
	list_for_each_entry(sd, &sd_list, dev_node) {
		if (!sd->cm_id || READ_ONCE(sd->cm_id->device) != dev)
			continue;
		sock_hold(&sd->sk);
		list_add_tail(&sd->rm_node, &batch);
	}
	mutex_unlock(&sd_list_mutex);

	list_for_each_entry_safe(sd, tmp, &batch, rm_node) {
		list_del(&sd->rm_node);
		lock_sock(&sd->sk);
		spin_lock_bh(&sd->lock);
		sd_fail(sd, -ENETDOWN);
		spin_unlock_bh(&sd->lock);
		sd_transport_teardown(sd);
		release_sock(&sd->sk);
		sock_put(&sd->sk);
	}
}

static struct ib_client sd_ib_client = {
	.name = "af_smbdirect",
	.add = sd_device_add,
	.remove = sd_device_remove,
};

int sd_device_init(void)
{
	return ib_register_client(&sd_ib_client);
}

void sd_device_exit(void)
{
	ib_unregister_client(&sd_ib_client);
}
