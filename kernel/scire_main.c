// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: module, device life cycle, rdma link type and netdev tracking.
 *
 * A device is created by "rdma link add NAME type scire netdev IFACE" and
 * lives until "rdma link delete NAME", until its netdev is unregistered, or
 * until the module is unloaded, whichever comes first. All three end in
 * __ib_unregister_device(), which calls scire_dealloc_driver() once.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/module.h>
#include <linux/if_arp.h>
#include <linux/random.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>

#include "scire.h"

MODULE_AUTHOR("The scire authors");
MODULE_DESCRIPTION("scire: software RoCEv2 and InfiniBand RDMA device with a SCIF-style RMA bridge");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("scire");
SCIRE_IMPORT_NS_DMA_BUF;

bool scire_fast_path = true;
module_param_named(fast_path, scire_fast_path, bool, 0644);
MODULE_PARM_DESC(fast_path,
		 "Same-host QP pairs exchange whole units without packet headers or ICRC, and receivers run in the sender's context (default Y; N: QPs entering RTS from then on take the wire path, and same-host receivers stop running in the sender's context at once)");

/*
 * Every scire device, registered or on its way in or out. The mutex is never
 * held across a call into the core that may take RTNL (registration), since
 * the netdev notifier takes it with RTNL held.
 */
static LIST_HEAD(scire_devs);
static DEFINE_MUTEX(scire_devs_lock);

static ssize_t scire_abi_version_show(struct device *device,
				      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", SCIRE_UVERBS_ABI_VERSION);
}
static DEVICE_ATTR_RO(scire_abi_version);

/*
 * The provider matches scire devices on this file: our driver_id is
 * RDMA_DRIVER_UNKNOWN (there is none for an out-of-tree driver), so neither
 * the driver id nor a name prefix can identify us.
 */
static struct attribute *scire_dev_attrs[] = {
	&dev_attr_scire_abi_version.attr,
	NULL,
};

static const struct attribute_group scire_dev_attr_group = {
	.attrs = scire_dev_attrs,
};

static void scire_dealloc_driver(struct ib_device *ibdev)
{
	struct scire_dev *sdev = to_sdev(ibdev);

	mutex_lock(&scire_devs_lock);
	list_del_init(&sdev->list);
	mutex_unlock(&scire_devs_lock);

	if (sdev->link == SCIRE_LINK_IB)
		scire_ib_net_close(sdev);
	else
		scire_net_dev_close(sdev);

	WARN_ON(!xa_empty(&sdev->mr_xa));
	WARN_ON(!xa_empty(&sdev->cq_xa));
	WARN_ON(!xa_empty(&sdev->qp_xa));
	WARN_ON(!xa_empty(&sdev->srq_xa));
	WARN_ON(!xa_empty(&sdev->ah_xa));
	WARN_ON(!list_empty(&sdev->mcg_list));
	xa_destroy(&sdev->mr_xa);
	xa_destroy(&sdev->cq_xa);
	xa_destroy(&sdev->qp_xa);
	xa_destroy(&sdev->srq_xa);
	xa_destroy(&sdev->ah_xa);
	mutex_destroy(&sdev->mcg_lock);
	scire_raw_cleanup(sdev);
	scire_dm_release_freed(sdev);
	mutex_destroy(&sdev->dm_lock);
	free_percpu(sdev->stats);
	free_percpu(sdev->dgid_cache);
}

/*
 * The core tells a RoCE driver of every GID it adds to or deletes from
 * the port's table; the receive path's cache of its last lookup
 * (scire_rcv_dgid_ok()) is stale from then on. A deleted entry is already
 * out of reach of lookups when the core calls del_gid.
 */
static int scire_add_gid(const struct ib_gid_attr *attr, void **context)
{
	atomic_inc(&to_sdev(attr->device)->gid_gen);
	return 0;
}

static int scire_del_gid(const struct ib_gid_attr *attr, void **context)
{
	atomic_inc(&to_sdev(attr->device)->gid_gen);
	return 0;
}

static const struct ib_device_ops scire_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SCIRE_UVERBS_ABI_VERSION,

	.add_gid = scire_add_gid,
	.alloc_dm = scire_alloc_dm,
	.alloc_hw_port_stats = scire_alloc_hw_port_stats,
	.alloc_mr = scire_alloc_mr,
	.alloc_mw = scire_alloc_mw,
	.alloc_pd = scire_alloc_pd,
	.alloc_ucontext = scire_alloc_ucontext,
	.alloc_xrcd = scire_alloc_xrcd,
	.attach_mcast = scire_attach_mcast,
	.create_ah = scire_create_ah,
	.create_flow = scire_create_flow,
	SCIRE_CREATE_CQ_OPS,
	.create_qp = scire_create_qp,
	.create_rwq_ind_table = scire_create_rwq_ind_table,
	.create_srq = scire_create_srq,
	.create_wq = scire_create_wq,
	.create_user_ah = scire_create_ah,
	.dealloc_dm = scire_dealloc_dm,
	.dealloc_driver = scire_dealloc_driver,
	.dealloc_mw = scire_dealloc_mw,
	.dealloc_pd = scire_dealloc_pd,
	.dealloc_ucontext = scire_dealloc_ucontext,
	.dealloc_xrcd = scire_dealloc_xrcd,
	.del_gid = scire_del_gid,
	.dereg_mr = scire_dereg_mr,
	.destroy_ah = scire_destroy_ah,
	.destroy_cq = scire_destroy_cq,
	.destroy_flow = scire_destroy_flow,
	.destroy_qp = scire_destroy_qp,
	.destroy_rwq_ind_table = scire_destroy_rwq_ind_table,
	.destroy_srq = scire_destroy_srq,
	.destroy_wq = scire_destroy_wq,
	.detach_mcast = scire_detach_mcast,
	.device_group = &scire_dev_attr_group,
	.disassociate_ucontext = scire_disassociate_ucontext,
	.fill_res_qp_entry = scire_fill_res_qp_entry,
	.get_dma_mr = scire_get_dma_mr,
	.get_hw_stats = scire_get_hw_stats,
	.get_link_layer = scire_get_link_layer,
	.get_port_immutable = scire_get_port_immutable,
	.map_mr_sg = scire_map_mr_sg,
	.mmap = scire_mmap,
	.mmap_free = scire_mmap_free,
	.modify_qp = scire_modify_qp,
	.modify_srq = scire_modify_srq,
	.modify_wq = scire_modify_wq,
	.poll_cq = scire_poll_cq,
	.post_recv = scire_post_recv,
	.post_send = scire_post_send,
	.post_srq_recv = scire_post_srq_recv,
	.query_ah = scire_query_ah,
	.query_device = scire_query_device,
	.query_pkey = scire_query_pkey,
	.query_port = scire_query_port,
	.query_qp = scire_query_qp,
	.query_srq = scire_query_srq,
	.reg_dm_mr = scire_reg_dm_mr,
	.reg_user_mr = scire_reg_user_mr_op,
	.reg_user_mr_dmabuf = scire_reg_dmabuf_mr_op,
	.advise_mr = scire_advise_mr,
	.rereg_user_mr = scire_rereg_user_mr,
	.req_notify_cq = scire_req_notify_cq,
	SCIRE_RESIZE_CQ_OP,

	INIT_RDMA_OBJ_SIZE(ib_ah, scire_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, scire_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, scire_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, scire_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, scire_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_rwq_ind_table, scire_rwq_ind_table, ibtbl),
	INIT_RDMA_OBJ_SIZE(ib_srq, scire_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, scire_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, scire_xrcd, ibxrcd),
};

static enum ib_port_state scire_netdev_port_state(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
}

/**
 * scire_port_update() - follow the netdev's running/carrier state.
 * @sdev: a registered scire device.
 *
 * Sets the port state from the netdev and, on a change, dispatches
 * IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR (IBA 11.6.3, unaffiliated
 * asynchronous events), which also reach user space through
 * ibv_get_async_event(). A scire_ib port goes to DOWN or INIT instead and
 * leaves the rest to its subnet manager (scire_ib_port_update()).
 *
 * Context: process or atomic context; takes scire_dev.port_lock.
 */
void scire_port_update(struct scire_dev *sdev)
{
	enum ib_port_state state = scire_netdev_port_state(sdev->netdev);
	struct ib_event event = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
	};
	unsigned long flags;
	bool changed;

	if (sdev->link == SCIRE_LINK_IB) {
		scire_ib_port_update(sdev);
		return;
	}
	spin_lock_irqsave(&sdev->port_lock, flags);
	changed = sdev->port_state != state;
	/* Read without the lock by scire_port_up(). */
	WRITE_ONCE(sdev->port_state, state);
	spin_unlock_irqrestore(&sdev->port_lock, flags);

	if (!changed)
		return;
	event.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR;
	ib_dispatch_event(&event);
}

static bool scire_netdev_supported(const struct net_device *ndev)
{
	return ndev->type == ARPHRD_ETHER && ndev->addr_len == ETH_ALEN;
}

/* Lock class of every device's AH table (scire_dev_add()). */
static struct lock_class_key scire_ah_xa_key;

/**
 * scire_dev_add() - create and register a scire device on a netdev.
 * @ibdev_name: the name asked for ("scire%d" style templates allowed).
 * @ndev: an Ethernet netdev; held by the core for the device's life.
 * @link: RoCEv2 (link type "scire") or InfiniBand ("scire_ib").
 *
 * Context: process context, RTNL not held (rdma netlink "link add").
 * Return: 0; -EINVAL for a netdev that is not Ethernet; -EEXIST if the
 * netdev has a scire device already; -ENOMEM; -ENODEV if the netdev went
 * away meanwhile; errors of ib_register_device().
 */
int scire_dev_add(const char *ibdev_name, struct net_device *ndev,
		  enum scire_link link)
{
	struct scire_dev *sdev, *other;
	int ret;

	if (!scire_netdev_supported(ndev))
		return -EINVAL;

	sdev = ib_alloc_device(scire_dev, ibdev);
	if (!sdev)
		return -ENOMEM;

	sdev->netdev = ndev;
	sdev->link = link;
	INIT_LIST_HEAD(&sdev->list);
	spin_lock_init(&sdev->port_lock);
	sdev->port_state = scire_netdev_port_state(ndev);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	get_random_bytes(&sdev->key_secret, sizeof(sdev->key_secret));
	scire_src_limit_init(&sdev->gsi_limit);
	scire_src_limit_init(&sdev->err_limit);
	xa_init_flags(&sdev->cq_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->srq_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	/*
	 * The tables above share one lock class (one xa_init_flags() site),
	 * and only this one is taken with interrupts off, under ib_sa's own
	 * lock: without a class of its own lockdep sees the MR table's
	 * plain spin_lock() under that lock.
	 */
	lockdep_set_class(&sdev->ah_xa.xa_lock, &scire_ah_xa_key);
	mutex_init(&sdev->mcg_lock);
	INIT_LIST_HEAD(&sdev->mcg_list);
	scire_raw_init(sdev);
	mutex_init(&sdev->dm_lock);
	INIT_LIST_HEAD(&sdev->dm_freed);
	atomic_set(&sdev->num_ah, 0);
	sdev->stats = alloc_percpu(struct scire_stats);
	sdev->dgid_cache = alloc_percpu(struct scire_dgid_cache);
	if (!sdev->stats || !sdev->dgid_cache) {
		ret = -ENOMEM;
		goto err_dealloc;
	}
	atomic_set(&sdev->num_pd, 0);
	atomic_set(&sdev->num_cq, 0);
	atomic_set(&sdev->num_mr, 0);
	atomic_set(&sdev->num_qp, 0);
	atomic_set(&sdev->num_srq, 0);

	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.num_comp_vectors = num_possible_cpus();
	addrconf_addr_eui48((unsigned char *)&sdev->ibdev.node_guid,
			    ndev->dev_addr);
	snprintf(sdev->ibdev.node_desc, sizeof(sdev->ibdev.node_desc),
		 "scire %s", ndev->name);
	if (link == SCIRE_LINK_IB) {
		scire_ib_port_init(sdev);
		/* First: ib_set_device_ops() keeps ops already set. */
		ib_set_device_ops(&sdev->ibdev, &scire_ib_dev_ops);
	}
	ib_set_device_ops(&sdev->ibdev, &scire_dev_ops);
	sdev->ibdev.driver_def = scire_uapi_defs;

	/* One scire device per netdev: two would fight over the QPN space. */
	mutex_lock(&scire_devs_lock);
	list_for_each_entry(other, &scire_devs, list) {
		if (other->netdev == ndev) {
			mutex_unlock(&scire_devs_lock);
			ret = -EEXIST;
			goto err_dealloc;
		}
	}
	list_add_tail(&sdev->list, &scire_devs);
	mutex_unlock(&scire_devs_lock);

	ret = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (ret)
		goto err_dealloc;

	/*
	 * The RoCEv2 UDP socket of the netdev's namespace (scire_net.c), or
	 * a scire_ib port's own (scire_ib_net.c): it must not take RoCEv2.
	 */
	if (link == SCIRE_LINK_ROCE)
		ret = scire_net_dev_open(sdev);
	else
		ret = scire_ib_net_open(sdev);
	if (ret)
		goto err_dealloc;

	/* NULL DMA device: virtual DMA, SGEs carry kernel virtual addresses. */
	ret = ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	if (ret)
		goto err_dealloc;

	/*
	 * The netdev may have started unregistering while we registered, after
	 * the notifier looked for us; NETDEV_UNREGISTER would then never be
	 * seen for this device and the netdev would wait on our reference.
	 */
	if (READ_ONCE(ndev->reg_state) != NETREG_REGISTERED) {
		ib_unregister_device(&sdev->ibdev);
		return -ENODEV;
	}
	if (link == SCIRE_LINK_IB)
		scire_ib_net_start(sdev);
	return 0;

err_dealloc:
	/* Calls scire_dealloc_driver(), which unlists sdev. */
	ib_dealloc_device(&sdev->ibdev);
	return ret;
}

static int scire_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return scire_dev_add(ibdev_name, ndev, SCIRE_LINK_ROCE);
}

static struct rdma_link_ops scire_link_ops = {
	.type = "scire",
	.newlink = scire_newlink,
};

/* Find and hold the registered scire device on @ndev, if any. */
static struct scire_dev *scire_get_by_netdev(struct net_device *ndev)
{
	struct scire_dev *sdev, *found = NULL;

	mutex_lock(&scire_devs_lock);
	list_for_each_entry(sdev, &scire_devs, list) {
		if (sdev->netdev == ndev) {
			if (ib_device_try_get(&sdev->ibdev))
				found = sdev;
			break;
		}
	}
	mutex_unlock(&scire_devs_lock);
	return found;
}

static int scire_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct scire_dev *sdev;

	sdev = scire_get_by_netdev(ndev);
	if (!sdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		ib_unregister_device_queued(&sdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		scire_port_update(sdev);
		break;
	default:
		break;
	}
	ib_device_put(&sdev->ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block scire_netdev_notifier = {
	.notifier_call = scire_netdev_event,
};

/*
 * Unregister every scire device. ib_unregister_driver() cannot be used: it
 * matches on driver_id, and ours (RDMA_DRIVER_UNKNOWN) is shared with any
 * other out-of-tree driver.
 */
static void scire_unregister_all(void)
{
	struct scire_dev *sdev;

	for (;;) {
		mutex_lock(&scire_devs_lock);
		sdev = list_first_entry_or_null(&scire_devs, struct scire_dev,
						list);
		/* Keep the memory while we wait outside the lock. */
		if (sdev)
			get_device(&sdev->ibdev.dev);
		mutex_unlock(&scire_devs_lock);
		if (!sdev)
			break;
		/*
		 * Unregisters, or waits for an unregistration already under
		 * way; either way scire_dealloc_driver() has unlisted sdev
		 * when it returns.
		 */
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

/*
 * The QPs' work items. Per CPU, not unbound: a QP's work item runs on the
 * CPU that queued it, so what a softirq run leaves to it (the rest of a
 * READ response, say) leaves after the packets that run sent, through the
 * same CPU's backlog. An unbound worker on another CPU would overtake
 * them (veth and loopback hand packets to the sending CPU's backlog), and
 * a requester such as rdma_rxe's that does not recover from a reordered
 * READ response waits forever. WQ_HIGHPRI, so the work is not queued
 * behind user threads busy-polling that CPU; WQ_CPU_INTENSIVE, so one
 * QP's long run does not hold back the other QPs' items there;
 * WQ_MEM_RECLAIM because kernel ULPs (nvme-rdma) may depend on us to make
 * progress under memory pressure.
 */
struct workqueue_struct *scire_wq;

static int __init scire_init(void)
{
	int ret;

	scire_wq = alloc_workqueue("scire", WQ_PERCPU | WQ_HIGHPRI |
				   WQ_CPU_INTENSIVE | WQ_MEM_RECLAIM, 0);
	if (!scire_wq)
		return -ENOMEM;
	scire_hdr_init();
	ret = scire_net_init();
	if (ret)
		goto err_wq;
	ret = register_netdevice_notifier(&scire_netdev_notifier);
	if (ret)
		goto err_net;
	/* Before any scire_ib device can exist. */
	ret = scire_ib_trap_register();
	if (ret)
		goto err_notifier;
	rdma_link_register(&scire_link_ops);
	scire_ib_register_link();
	return 0;

err_notifier:
	unregister_netdevice_notifier(&scire_netdev_notifier);
err_net:
	scire_net_exit();
err_wq:
	destroy_workqueue(scire_wq);
	return ret;
}

static void __exit scire_exit(void)
{
	scire_ib_unregister_link();
	rdma_link_unregister(&scire_link_ops);
	scire_unregister_all();
	scire_ib_trap_unregister();
	unregister_netdevice_notifier(&scire_netdev_notifier);
	scire_net_exit();
	destroy_workqueue(scire_wq);
}

module_init(scire_init);
module_exit(scire_exit);
