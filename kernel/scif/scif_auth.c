// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: the node table's shared secret (docs/security.md, "The SCIF
 * bridge"; issue 52, point 2).
 *
 *   printf %s "$secret" > /sys/kernel/config/scif/secret   (1 .. 64 bytes)
 *   echo > /sys/kernel/config/scif/secret                  (clears it)
 *
 * With a secret set, both sides of a connection prove that they know it
 * without sending it: each sends a fresh random nonce (the client in the
 * CM request, the server in the reply) and an HMAC-SHA256 under the secret
 * over both nonces, the connection's node ids and ports, and a label that
 * says which side made it, so that a proof is good for one connection and
 * one direction only. The server's proof travels in the CM reply; the
 * client's, which must cover the server's nonce, is the first message on
 * the new connection (rdma_cm carries no private data in the RTU), and
 * scif_accept() returns the endpoint only once it has checked it.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "scif_main.h"

/*
 * The keyed hash of the secret, NULL while none is set. The HMAC keeps
 * only state derived from the key; crypto_free_shash() zeroes it.
 */
static DEFINE_MUTEX(scif_auth_lock);
static struct crypto_shash *scif_auth_tfm;

/**
 * struct scif_auth_input - what a proof is a keyed hash of
 * @label: "scif-auth1-srv" or "scif-auth1-cli", zero padded: the side that
 *	made the proof, so a proof cannot be reflected to its maker
 * @nonce_c: the client's nonce (from the CM request)
 * @nonce_s: the server's nonce (from the CM reply)
 * @client_node: node id of the connecting side
 * @client_port: its SCIF port
 * @server_node: node id of the accepting side
 * @server_port: the port connected to
 */
struct scif_auth_input {
	u8 label[16];
	u8 nonce_c[SCIF_AUTH_NONCE_LEN];
	u8 nonce_s[SCIF_AUTH_NONCE_LEN];
	__be16 client_node;
	__be16 client_port;
	__be16 server_node;
	__be16 server_port;
};

/**
 * scif_auth_set_secret() - set, replace or clear the node table's secret
 * @key: the secret's bytes
 * @len: 0 (clear) .. SCIF_AUTH_SECRET_MAX
 *
 * Connections set up afterwards use the new secret; a request already
 * queued on a listener is checked with the secret of its scif_accept().
 *
 * Context: process; takes scif_auth_lock.
 * Return: 0; -EINVAL for a too long secret; -ENOENT when the kernel has no
 * hmac(sha256) (CONFIG_CRYPTO_HMAC, CONFIG_CRYPTO_SHA256); -ENOMEM.
 */
int scif_auth_set_secret(const u8 *key, size_t len)
{
	struct crypto_shash *tfm = NULL, *old;
	int ret;

	if (len > SCIF_AUTH_SECRET_MAX)
		return -EINVAL;
	if (len) {
		tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
		if (IS_ERR(tfm))
			return PTR_ERR(tfm);
		ret = crypto_shash_setkey(tfm, key, len);
		if (ret) {
			crypto_free_shash(tfm);
			return ret;
		}
	}
	mutex_lock(&scif_auth_lock);
	old = scif_auth_tfm;
	scif_auth_tfm = tfm;
	mutex_unlock(&scif_auth_lock);
	crypto_free_shash(old);
	return 0;
}

/**
 * scif_auth_enabled() - is a secret set
 *
 * Context: any; the answer may change right after.
 * Return: true if connections must prove the secret.
 */
bool scif_auth_enabled(void)
{
	return READ_ONCE(scif_auth_tfm);
}

/**
 * scif_auth_proof() - the proof of one side of a connection
 * @ep: the endpoint: connecting (@ep->port is the client, @ep->peer the
 *	server) or accepted (the reverse); @ep->auth holds both nonces
 * @server: make the server's proof (else the client's)
 * @mac: SCIF_AUTH_MAC_LEN bytes of result
 *
 * Context: process; takes scif_auth_lock.
 * Return: 0; -EACCES when no secret is set (any more); or the crypto
 * API's errno.
 */
int scif_auth_proof(struct scif_endpt *ep, bool server, u8 *mac)
{
	const struct scif_port_id *client, *srv;
	struct scif_auth_input in = {};
	int ret = -EACCES;

	client = ep->auth.client ? &ep->port : &ep->peer;
	srv = ep->auth.client ? &ep->peer : &ep->port;
	strscpy(in.label, server ? "scif-auth1-srv" : "scif-auth1-cli",
		sizeof(in.label));
	memcpy(in.nonce_c, ep->auth.nonce_c, sizeof(in.nonce_c));
	memcpy(in.nonce_s, ep->auth.nonce_s, sizeof(in.nonce_s));
	in.client_node = cpu_to_be16(client->node);
	in.client_port = cpu_to_be16(client->port);
	in.server_node = cpu_to_be16(srv->node);
	in.server_port = cpu_to_be16(srv->port);

	mutex_lock(&scif_auth_lock);
	if (scif_auth_tfm)
		ret = crypto_shash_tfm_digest(scif_auth_tfm, (const u8 *)&in,
					      sizeof(in), mac);
	mutex_unlock(&scif_auth_lock);
	return ret;
}

/**
 * scif_auth_check() - does a proof received match the one expected
 * @ep: the endpoint (see scif_auth_proof())
 * @server: @mac is the server's proof (else the client's)
 * @mac: SCIF_AUTH_MAC_LEN bytes received
 *
 * Compares in constant time (crypto_memneq()).
 *
 * Context: process; takes scif_auth_lock.
 * Return: 0 if @mac is right; -EACCES if not, or no secret is set.
 */
int scif_auth_check(struct scif_endpt *ep, bool server, const u8 *mac)
{
	u8 want[SCIF_AUTH_MAC_LEN];
	int ret;

	ret = scif_auth_proof(ep, server, want);
	if (!ret && crypto_memneq(want, mac, sizeof(want)))
		ret = -EACCES;
	memzero_explicit(want, sizeof(want));
	return ret ? -EACCES : 0;
}

/**
 * scif_auth_rx() - the first message of a connection whose accept waits
 *	for the client's proof
 * @ep: the accepted endpoint, @ep->auth.state SCIF_AUTH_WAIT
 * @type: the message's type
 * @data: its payload
 * @len: payload bytes
 *
 * The message must be SCIF_MSG_AUTH carrying the proof scif_cm_accept()
 * expects (@ep->auth.mac); anything else fails the connection. Wakes the
 * accept.
 *
 * Context: the CQ's softirq; does not sleep.
 * Return: 0 if proven; -EACCES (scif_cm_accept() ends the connection).
 */
int scif_auth_rx(struct scif_endpt *ep, u16 type, const void *data, u32 len)
{
	bool ok = type == SCIF_MSG_AUTH && len == SCIF_AUTH_MAC_LEN &&
		  !crypto_memneq(data, ep->auth.mac, SCIF_AUTH_MAC_LEN);

	/* Pairs with the read in scif_cm_accept()'s wait. */
	smp_store_release(&ep->auth.state, ok ? SCIF_AUTH_OK : SCIF_AUTH_FAILED);
	wake_up_all(&ep->wq);
	return ok ? 0 : -EACCES;
}

/**
 * scif_auth_exit() - forget the secret
 *
 * Context: module exit.
 */
void scif_auth_exit(void)
{
	scif_auth_set_secret(NULL, 0);
}
