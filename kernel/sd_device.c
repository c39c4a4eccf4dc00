// SPDX-License-Identifier: GPL-2.0
/*
 * Device removal. rdma_cm would only tell each id on its own, from inside
 * its handler where the id cannot be destroyed; as an ib_client registered
 * after rdma_cm we are called first, while the device is still whole, and
 * can tear every socket on it down synchronously. Their users then see
 * ENETDOWN. An id that reaches the device after that is rdma_cm's to
 * report; sd_device_removal() lets it go as promptly.
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

/* bind(port 0) moved to another id (sd_cm.c): a walk sees one or the other. */
void sd_list_set_id(struct sd_sock *sd, struct rdma_cm_id *id)
{
	mutex_lock(&sd_list_mutex);
	sd->cm_id = id;
	mutex_unlock(&sd_list_mutex);
}

/*
 * An id that picked the device up after sd_device_remove() looked (its
 * address or route resolved onto it, a connect request came in, a socket
 * connected or listened on it) gets rdma_cm's DEVICE_REMOVAL, and rdma_cm
 * waits until it is destroyed: "rdma link delete" must not wait for the
 * application to close the socket. The handler cannot destroy its own id,
 * nor take lock_sock() (close() holds it while rdma_destroy_id() waits
 * for the handler); a work does what sd_device_remove() does, for this
 * id only: a socket that started over with another one keeps that.
 */
void sd_device_removal(struct sd_sock *sd, struct rdma_cm_id *id)
{
	spin_lock_bh(&sd->lock);
	sd->removed_id = id;
	sd_fail(sd, -ENETDOWN);
	spin_unlock_bh(&sd->lock);
	sock_hold(&sd->sk);
	if (!queue_work(sd_wq, &sd->remove_work))
		sock_put(&sd->sk);
}

void sd_removal_fn(struct work_struct *work)
{
	struct sd_sock *sd = container_of(work, struct sd_sock, remove_work);
	bool gone;

	lock_sock(&sd->sk);
	spin_lock_bh(&sd->lock);
	gone = sd->cm_id && sd->cm_id == sd->removed_id;
	sd->removed_id = NULL;
	spin_unlock_bh(&sd->lock);
	if (gone)
		sd_transport_teardown(sd);
	release_sock(&sd->sk);
	sock_put(&sd->sk);
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
