// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: the node table, in configfs.
 *
 *   mkdir /sys/kernel/config/scif/nodes/<id>        (id: 0 .. 65534)
 *   echo 10.77.0.1 > /sys/kernel/config/scif/nodes/<id>/addr   (IPv4 or IPv6)
 *
 * The table is one list of (node id, address) pairs for the whole host,
 * like /etc/hosts; every host of a SCIF network writes the same table.
 * A network namespace is the node whose address is one of its own: that
 * is how two namespaces of one kernel are two nodes. A namespace that owns
 * none of the addresses is node 0, reachable only by itself (loopback), at
 * the first IPv4 address of its first running non-loopback interface; so
 * a single host needs no configuration at all, as with SCIF over PCIe,
 * where the host is node 0.
 *
 * SCIF clients (scif_client_register()) are told about every node of the
 * table as it is created and removed.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/inet.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/sort.h>
#include <net/addrconf.h>
#include <net/route.h>

#include "scif_main.h"

/**
 * struct scif_node - a node of the table
 * @group: its configfs directory
 * @spdev: what SCIF clients are given
 * @addr: its address; family AF_UNSPEC until one is written
 * @list: on scif_nodes
 * @cm_tokens: the node's token bucket for connection requests it sends
 *	this host (scif_node_cm_admit()), in 1/HZ of a request
 * @cm_last: jiffies when @cm_tokens was last brought up to date
 * @cm_used: the bucket has been used (before that it counts as full)
 */
struct scif_node {
	struct config_group group;
	struct scif_peer_dev spdev;
	struct sockaddr_storage addr;
	struct list_head list;
	u64 cm_tokens;
	unsigned long cm_last;
	bool cm_used;
};

static DEFINE_MUTEX(scif_nodes_lock);	/* the list, addresses and clients */
static LIST_HEAD(scif_nodes);
static LIST_HEAD(scif_clients);

static struct scif_node *to_scif_node(struct config_item *item)
{
	return container_of(to_config_group(item), struct scif_node, group);
}

/* Is @addr one of @net's own addresses? */
static bool scif_addr_is_local(struct net *net, const struct sockaddr_storage *addr)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;

	switch (addr->ss_family) {
	case AF_INET:
		return inet_addr_type(net, sin->sin_addr.s_addr) == RTN_LOCAL;
	case AF_INET6:
		return ipv6_chk_addr(net, &sin6->sin6_addr, NULL, 0);
	default:
		return false;
	}
}

/* The first IPv4 address of a running non-loopback interface of @net. */
static int scif_auto_addr(struct net *net, struct sockaddr_storage *addr)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;
	struct net_device *ndev;
	int ret = -ENODEV;

	rcu_read_lock();
	for_each_netdev_rcu(net, ndev) {
		struct in_device *idev = __in_dev_get_rcu(ndev);
		const struct in_ifaddr *ifa;

		if ((ndev->flags & IFF_LOOPBACK) || !netif_running(ndev) || !idev)
			continue;
		in_dev_for_each_ifa_rcu(ifa, idev) {
			memset(addr, 0, sizeof(*addr));
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = ifa->ifa_local;
			ret = 0;
			goto out;
		}
	}
out:
	rcu_read_unlock();
	return ret;
}

static struct scif_node *scif_node_find_self(struct net *net)
{
	struct scif_node *node;

	lockdep_assert_held(&scif_nodes_lock);
	list_for_each_entry(node, &scif_nodes, list)
		if (scif_addr_is_local(net, &node->addr))
			return node;
	return NULL;
}

/**
 * scif_node_self() - the node a network namespace is
 * @net: the namespace
 * @self: its node id
 * @addr: its address, for connections to itself; may be NULL
 *
 * Context: process; takes scif_nodes_lock.
 * Return: 0, or -ENODEV when @addr was asked for and the namespace is an
 * unconfigured node 0 without a running interface with an IPv4 address
 * (@self is set even then).
 */
int scif_node_self(struct net *net, u16 *self, struct sockaddr_storage *addr)
{
	struct scif_node *node;
	int ret = 0;

	mutex_lock(&scif_nodes_lock);
	node = scif_node_find_self(net);
	*self = node ? node->spdev.dnode : 0;
	if (addr) {
		if (node)
			*addr = node->addr;
		else
			ret = scif_auto_addr(net, addr);
	}
	mutex_unlock(&scif_nodes_lock);
	return ret;
}

/**
 * scif_node_addr() - where a node is reached from a namespace
 * @net: the namespace asking
 * @id: node id
 * @addr: the node's address
 *
 * Context: process; takes scif_nodes_lock.
 * Return: 0, or -ENODEV if @id is neither @net's own node nor a node of the
 * table with an address.
 */
int scif_node_addr(struct net *net, u16 id, struct sockaddr_storage *addr)
{
	struct scif_node *node;
	u16 self;
	int ret;

	ret = scif_node_self(net, &self, addr);
	if (id == self)
		return ret;
	ret = -ENODEV;
	mutex_lock(&scif_nodes_lock);
	list_for_each_entry(node, &scif_nodes, list) {
		if (node->spdev.dnode == id && node->addr.ss_family != AF_UNSPEC) {
			*addr = node->addr;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&scif_nodes_lock);
	return ret;
}

/**
 * scif_node_exists() - is a node id known to a namespace
 * @net: the namespace asking
 * @id: node id
 *
 * Return: 1 if @id is @net's own node or a node of the table with an
 * address, else 0.
 */
int scif_node_exists(struct net *net, u16 id)
{
	struct sockaddr_storage addr;
	u16 self;

	scif_node_self(net, &self, NULL);
	return id == self || !scif_node_addr(net, id, &addr);
}

/* The IPv4 address of @addr, an IPv4 or IPv4-mapped IPv6 one; else 0. */
static bool scif_addr_v4(const struct sockaddr_storage *addr, __be32 *v4)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;

	if (addr->ss_family == AF_INET) {
		*v4 = sin->sin_addr.s_addr;
		return true;
	}
	if (addr->ss_family == AF_INET6 && ipv6_addr_v4mapped(&sin6->sin6_addr)) {
		*v4 = sin6->sin6_addr.s6_addr32[3];
		return true;
	}
	return false;
}

/* Do @a and @b name the same host address? Ports are not compared. */
static bool scif_addr_same_host(const struct sockaddr_storage *a,
				const struct sockaddr_storage *b)
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;
	__be32 a4, b4;

	if (scif_addr_v4(a, &a4) && scif_addr_v4(b, &b4))
		return a4 == b4;
	return a->ss_family == AF_INET6 && b->ss_family == AF_INET6 &&
	       ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr);
}

/**
 * scif_node_check_peer() - may a connection request claiming a node come
 * from an address
 * @net: the namespace the request reached
 * @claimed: the node id the request's private data claims to come from
 * @src: the address the request came from (the rdma_cm ID's destination)
 *
 * A request is from @net's own node only when @src is one of @net's own
 * addresses (SCIF's loopback), and from another node only when the node
 * table names @claimed with the address @src. Anything else is a host
 * outside the table, or one claiming another's node id.
 *
 * Context: process; takes scif_nodes_lock.
 * Return: 0 if the claim holds, -EACCES if not.
 */
int scif_node_check_peer(struct net *net, u16 claimed,
			 const struct sockaddr_storage *src)
{
	struct scif_node *node;
	int ret = -EACCES;
	u16 self;

	scif_node_self(net, &self, NULL);
	if (claimed == self)
		return scif_addr_is_local(net, src) ? 0 : -EACCES;
	mutex_lock(&scif_nodes_lock);
	list_for_each_entry(node, &scif_nodes, list) {
		if (node->spdev.dnode == claimed &&
		    scif_addr_same_host(&node->addr, src)) {
			ret = 0;
			break;
		}
	}
	mutex_unlock(&scif_nodes_lock);
	return ret;
}

/*
 * Bring @node's bucket up to date and take one request from it. Tokens are
 * kept in 1/HZ of a request, so that each jiffy adds @rate of them and a
 * request costs HZ. A bucket idle long enough to fill is simply full: the
 * product elapsed * rate then stays below 2^50 for the parameters' bounds.
 */
static bool scif_node_take_token(struct scif_node *node, unsigned int rate,
				 unsigned int burst)
{
	u64 cap = (u64)burst * HZ;
	unsigned long now = jiffies, elapsed = now - node->cm_last;

	lockdep_assert_held(&scif_nodes_lock);
	if (!node->cm_used || elapsed >= (unsigned long)HZ * (burst / rate + 1))
		node->cm_tokens = cap;
	else
		node->cm_tokens = min(cap, node->cm_tokens + (u64)elapsed * rate);
	node->cm_used = true;
	node->cm_last = now;
	if (node->cm_tokens < HZ)
		return false;
	node->cm_tokens -= HZ;
	return true;
}

/**
 * scif_node_cm_admit() - may one more connection request of a node be
 * looked at
 * @id: the node the request comes from, already found to be the node of
 *	the address it came from (scif_node_check_peer())
 *
 * Each node of the table has a token bucket for the connection requests
 * (IBA CM REQs through rdma_cm) it sends this host's nodes, all ports and
 * namespaces together: module parameter cm_burst of them at once, then
 * cm_rate a second. A node that sends more, or whoever spoofs its
 * address, is refused at once, before an endpoint is allocated; other
 * nodes' requests go on. cm_rate 0 turns the limit off.
 *
 * Context: process (the rdma_cm listener's handler); takes scif_nodes_lock.
 * Return: true if the request may go on (also when the limit is off, or
 * @id is not in the table: only this namespace's own node, which loopback
 * requests claim), false if @id is over its rate.
 */
bool scif_node_cm_admit(u16 id)
{
	unsigned int rate = READ_ONCE(scif_cm_rate);
	unsigned int burst = max(READ_ONCE(scif_cm_burst), 1U);
	struct scif_node *node;
	bool ok = true;

	if (!rate)
		return true;
	mutex_lock(&scif_nodes_lock);
	list_for_each_entry(node, &scif_nodes, list) {
		if (node->spdev.dnode == id) {
			ok = scif_node_take_token(node, rate, burst);
			break;
		}
	}
	mutex_unlock(&scif_nodes_lock);
	return ok;
}

static int scif_cmp_u16(const void *a, const void *b)
{
	return *(const u16 *)a - *(const u16 *)b;
}

/**
 * scif_node_ids() - the nodes a namespace knows, and which one it is
 * @net: the namespace
 * @nodes: filled with up to @len node ids, ascending
 * @len: room in @nodes (entries, >= 0)
 * @self: the namespace's own node id
 *
 * The nodes are @net's own and every node of the table with an address.
 *
 * Context: process; takes scif_nodes_lock.
 * Return: the number of nodes (which may exceed @len), or -ENOMEM.
 */
int scif_node_ids(struct net *net, u16 *nodes, int len, u16 *self)
{
	struct scif_node *node;
	int n = 0, total = 1, i;
	u16 *all;

	mutex_lock(&scif_nodes_lock);
	list_for_each_entry(node, &scif_nodes, list)
		total++;
	all = kcalloc(total, sizeof(*all), GFP_KERNEL);
	if (!all) {
		mutex_unlock(&scif_nodes_lock);
		return -ENOMEM;
	}
	node = scif_node_find_self(net);
	*self = node ? node->spdev.dnode : 0;
	all[n++] = *self;
	list_for_each_entry(node, &scif_nodes, list)
		if (node->addr.ss_family != AF_UNSPEC && node->spdev.dnode != *self)
			all[n++] = node->spdev.dnode;
	mutex_unlock(&scif_nodes_lock);

	sort(all, n, sizeof(*all), scif_cmp_u16, NULL);
	for (i = 0; i < n && i < len; i++)
		nodes[i] = all[i];
	kfree(all);
	return n;
}

/* --- configfs ------------------------------------------------------------------ */

static ssize_t scif_node_addr_show(struct config_item *item, char *page)
{
	struct scif_node *node = to_scif_node(item);
	struct sockaddr_storage addr;

	mutex_lock(&scif_nodes_lock);
	addr = node->addr;
	mutex_unlock(&scif_nodes_lock);
	switch (addr.ss_family) {
	case AF_INET:
		return sysfs_emit(page, "%pI4\n", &((struct sockaddr_in *)&addr)->sin_addr);
	case AF_INET6:
		return sysfs_emit(page, "%pI6c\n", &((struct sockaddr_in6 *)&addr)->sin6_addr);
	default:
		return sysfs_emit(page, "\n");
	}
}

static ssize_t scif_node_addr_store(struct config_item *item, const char *page,
				    size_t count)
{
	struct scif_node *node = to_scif_node(item);
	struct sockaddr_storage addr = {};
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&addr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&addr;
	size_t len = count;

	while (len && isspace(page[len - 1]))
		len--;
	if (!len)
		addr.ss_family = AF_UNSPEC;
	else if (in4_pton(page, len, (u8 *)&sin->sin_addr, -1, NULL))
		sin->sin_family = AF_INET;
	else if (in6_pton(page, len, (u8 *)&sin6->sin6_addr, -1, NULL))
		sin6->sin6_family = AF_INET6;
	else
		return -EINVAL;
	mutex_lock(&scif_nodes_lock);
	node->addr = addr;
	mutex_unlock(&scif_nodes_lock);
	return count;
}

CONFIGFS_ATTR(scif_node_, addr);

static struct configfs_attribute *scif_node_attrs[] = {
	&scif_node_attr_addr,
	NULL,
};

static void scif_node_release(struct config_item *item)
{
	kfree(to_scif_node(item));
}

static struct configfs_item_operations scif_node_item_ops = {
	.release = scif_node_release,
};

static const struct config_item_type scif_node_type = {
	.ct_item_ops = &scif_node_item_ops,
	.ct_attrs = scif_node_attrs,
	.ct_owner = THIS_MODULE,
};

static struct config_group *scif_nodes_make(struct config_group *group,
					    const char *name)
{
	struct scif_client *client;
	struct scif_node *node, *other;
	u16 id;

	if (kstrtou16(name, 10, &id) || id > SCIF_MAX_NODE)
		return ERR_PTR(-EINVAL);
	node = kzalloc(sizeof(*node), GFP_KERNEL);
	if (!node)
		return ERR_PTR(-ENOMEM);
	node->spdev.dnode = id;
	node->addr.ss_family = AF_UNSPEC;

	mutex_lock(&scif_nodes_lock);
	list_for_each_entry(other, &scif_nodes, list) {
		if (other->spdev.dnode == id) {
			/* "007" and "7" would be the same node */
			mutex_unlock(&scif_nodes_lock);
			kfree(node);
			return ERR_PTR(-EEXIST);
		}
	}
	config_group_init_type_name(&node->group, name, &scif_node_type);
	list_add_tail(&node->list, &scif_nodes);
	list_for_each_entry(client, &scif_clients, node)
		if (client->probe)
			client->probe(&node->spdev);
	mutex_unlock(&scif_nodes_lock);
	return &node->group;
}

static void scif_nodes_drop(struct config_group *group, struct config_item *item)
{
	struct scif_node *node = to_scif_node(item);
	struct scif_client *client;

	mutex_lock(&scif_nodes_lock);
	list_for_each_entry(client, &scif_clients, node)
		if (client->remove)
			client->remove(&node->spdev);
	list_del(&node->list);
	mutex_unlock(&scif_nodes_lock);
	config_item_put(item);
}

static struct configfs_group_operations scif_nodes_group_ops = {
	.make_group = scif_nodes_make,
	.drop_item = scif_nodes_drop,
};

static const struct config_item_type scif_nodes_type = {
	.ct_group_ops = &scif_nodes_group_ops,
	.ct_owner = THIS_MODULE,
};

static struct config_group scif_nodes_group;

/*
 * /sys/kernel/config/scif/cm_rejected: connection requests refused since
 * the module was loaded because the node they claimed is not the node of
 * the address they came from (scif_node_check_peer()), in every namespace.
 */
atomic64_t scif_cm_rejected = ATOMIC64_INIT(0);

static ssize_t scif_subsys_cm_rejected_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%lld\n", atomic64_read(&scif_cm_rejected));
}

CONFIGFS_ATTR_RO(scif_subsys_, cm_rejected);

/*
 * /sys/kernel/config/scif/auth_failed: connections refused since the
 * module was loaded because one side did not prove the node table's
 * secret (scif_auth.c): a request without a nonce to a node with a secret
 * or the reverse, a missing or wrong proof in a reply (counted by the
 * connecting side), a missing, late or wrong proof from a client (counted
 * by the accepting side).
 */
atomic64_t scif_auth_failed = ATOMIC64_INIT(0);

static ssize_t scif_subsys_auth_failed_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%lld\n", atomic64_read(&scif_auth_failed));
}

CONFIGFS_ATTR_RO(scif_subsys_, auth_failed);

/*
 * /sys/kernel/config/scif/cm_rate_limited: connection requests refused
 * since the module was loaded because their node had sent more than its
 * rate (module parameters cm_rate and cm_burst, scif_node_cm_admit()), in
 * every namespace.
 */
atomic64_t scif_cm_rate_limited = ATOMIC64_INIT(0);

static ssize_t scif_subsys_cm_rate_limited_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%lld\n", atomic64_read(&scif_cm_rate_limited));
}

CONFIGFS_ATTR_RO(scif_subsys_, cm_rate_limited);

/*
 * /sys/kernel/config/scif/secret: the node table's shared secret, 1 to
 * SCIF_AUTH_SECRET_MAX bytes; one trailing newline is not part of it, and
 * writing nothing else clears it. Write-only (mode 0200, no show: configfs
 * refuses to open it for reading with EACCES), so it is never read back.
 */
static ssize_t scif_subsys_secret_store(struct config_item *item,
					const char *page, size_t count)
{
	size_t len = count;
	int ret;

	if (len && page[len - 1] == '\n')
		len--;
	ret = scif_auth_set_secret(page, len);
	return ret ? ret : count;
}

CONFIGFS_ATTR_WO(scif_subsys_, secret);

static struct configfs_attribute *scif_subsys_attrs[] = {
	&scif_subsys_attr_cm_rejected,
	&scif_subsys_attr_auth_failed,
	&scif_subsys_attr_cm_rate_limited,
	&scif_subsys_attr_secret,
	NULL,
};

static const struct config_item_type scif_subsys_type = {
	.ct_attrs = scif_subsys_attrs,
	.ct_owner = THIS_MODULE,
};

static struct configfs_subsystem scif_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf = "scif",
			.ci_type = &scif_subsys_type,
		},
	},
};

/**
 * scif_nodes_init() - register /sys/kernel/config/scif
 *
 * Context: module init.
 * Return: 0 or the negative errno of configfs_register_subsystem().
 */
int scif_nodes_init(void)
{
	config_group_init(&scif_subsys.su_group);
	mutex_init(&scif_subsys.su_mutex);
	config_group_init_type_name(&scif_nodes_group, "nodes", &scif_nodes_type);
	configfs_add_default_group(&scif_nodes_group, &scif_subsys.su_group);
	return configfs_register_subsystem(&scif_subsys);
}

/**
 * scif_nodes_exit() - unregister /sys/kernel/config/scif
 *
 * configfs holds the module while any node directory exists, so the table
 * is empty here.
 *
 * Context: module exit.
 */
void scif_nodes_exit(void)
{
	configfs_unregister_subsystem(&scif_subsys);
}

/**
 * scif_client_register() - follow the nodes of the table
 * @client: @client->probe is called for each node now in the table and for
 *	each one created later, @client->remove for each one removed and, at
 *	scif_client_unregister(), for each one left
 *
 * Context: process; the callbacks run under the node table's mutex and must
 * not create or remove nodes.
 * Return: 0.
 */
int scif_client_register(struct scif_client *client)
{
	struct scif_node *node;

	mutex_lock(&scif_nodes_lock);
	list_add_tail(&client->node, &scif_clients);
	if (client->probe)
		list_for_each_entry(node, &scif_nodes, list)
			client->probe(&node->spdev);
	mutex_unlock(&scif_nodes_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(scif_client_register);

/**
 * scif_client_unregister() - stop following the nodes
 * @client: registered by scif_client_register(); its remove callback runs
 *	for every node still in the table
 *
 * Context: process.
 */
void scif_client_unregister(struct scif_client *client)
{
	struct scif_node *node;

	mutex_lock(&scif_nodes_lock);
	if (client->remove)
		list_for_each_entry(node, &scif_nodes, list)
			client->remove(&node->spdev);
	list_del(&client->node);
	mutex_unlock(&scif_nodes_lock);
}
EXPORT_SYMBOL_GPL(scif_client_unregister);
