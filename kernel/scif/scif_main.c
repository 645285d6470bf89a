// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: Intel's SCIF (Symmetric Communication Interface) kernel API
 * and /dev/scif, carried over RDMA: a ULP over kernel verbs and rdma_cm
 * that runs on any RDMA device (scire, rdma_rxe, ...). A node is a network
 * namespace of a host; see scif_nodes.c for how nodes are named and
 * scif_main.h for the connection layout.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/module.h>
#include <net/netns/generic.h>

#include "scif_main.h"

unsigned int scif_cm_port = SCIF_CM_PORT;
module_param_named(cm_port, scif_cm_port, uint, 0444);
MODULE_PARM_DESC(cm_port,
		 "rdma_cm port (TCP port space) every node listens on for SCIF connections (default 23583)");

static unsigned int scif_net_id;

/*
 * The xarrays of struct scif_net share one lock class (xa_init_flags() is
 * inline), but only the pending counts' lock nests inside a listener's
 * slock, which the CQ's softirq takes: its own class, so that lockdep does
 * not take the ports' lock (taken with softirqs on) for it.
 */
static struct lock_class_key scif_pending_key;

/**
 * scif_net() - a namespace's SCIF node state
 * @net: the network namespace
 *
 * Return: its struct scif_net, which lives as long as @net does.
 */
struct scif_net *scif_net(struct net *net)
{
	return net_generic(net, scif_net_id);
}

static int __net_init scif_net_init(struct net *net)
{
	struct scif_net *sn = scif_net(net);

	sn->net = net;
	mutex_init(&sn->lock);
	mutex_init(&sn->cm_lock);
	xa_init(&sn->ports);
	xa_init(&sn->listeners);
	xa_init_flags(&sn->pending, XA_FLAGS_LOCK_BH);
	lockdep_set_class(&sn->pending.xa_lock, &scif_pending_key);
	sn->next_port = SCIF_PORT_RSVD;
	return 0;
}

static void __net_exit scif_net_exit(struct net *net)
{
	struct scif_net *sn = scif_net(net);

	/* Endpoints and listeners hold the namespace: none can be left. */
	WARN_ON(!xa_empty(&sn->ports) || !xa_empty(&sn->listeners) ||
		!xa_empty(&sn->pending) || sn->cm_listen[0] || sn->cm_listen[1]);
	xa_destroy(&sn->ports);
	xa_destroy(&sn->listeners);
	xa_destroy(&sn->pending);
}

static struct pernet_operations scif_net_ops = {
	.init = scif_net_init,
	.exit = scif_net_exit,
	.id = &scif_net_id,
	.size = sizeof(struct scif_net),
};

static int __init scif_init(void)
{
	int ret;

	if (!scif_cm_port || scif_cm_port > 65535) {
		pr_err("scire_scif: cm_port %u is not a port number\n", scif_cm_port);
		return -EINVAL;
	}
	ret = register_pernet_subsys(&scif_net_ops);
	if (ret)
		return ret;
	ret = scif_nodes_init();
	if (ret)
		goto err_pernet;
	ret = scif_mmap_init();
	if (ret)
		goto err_nodes;
	ret = scif_fd_init();
	if (ret)
		goto err_mmap;
	return 0;

err_mmap:
	scif_mmap_exit();
err_nodes:
	scif_nodes_exit();
	scif_auth_exit();
err_pernet:
	unregister_pernet_subsys(&scif_net_ops);
	return ret;
}

static void __exit scif_exit(void)
{
	scif_fd_exit();
	scif_mmap_exit();
	scif_nodes_exit();
	scif_auth_exit();
	unregister_pernet_subsys(&scif_net_ops);
}

module_init(scif_init);
module_exit(scif_exit);

MODULE_AUTHOR("The scire authors");
MODULE_DESCRIPTION("SCIF endpoints, windows and RMA over RDMA");
MODULE_LICENSE("Dual BSD/GPL");
/* The node table's secret (scif_auth.c) asks for hmac(sha256). */
MODULE_SOFTDEP("pre: hmac sha256");
