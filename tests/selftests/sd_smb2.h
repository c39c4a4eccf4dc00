/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough SMB2 ([MS-SMB2] 2.2.1, 2.2.3, 2.2.4) for the interop peers:
 * build a NEGOTIATE request, check a NEGOTIATE request or response. All
 * fields little-endian; built byte by byte so no struct packing matters.
 */
#ifndef SD_SMB2_H
#define SD_SMB2_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SMB2_HEADER_SIZE 64
#define SMB2_NEGOTIATE 0x0000
#define SMB2_FLAGS_SERVER_TO_REDIR 0x00000001

static inline uint16_t sd_le16(const unsigned char *p)
{
	return p[0] | p[1] << 8;
}

static inline uint32_t sd_le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void sd_put16(unsigned char *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void sd_put32(unsigned char *p, uint32_t v)
{
	sd_put16(p, v);
	sd_put16(p + 2, v >> 16);
}

static inline int sd_smb2_magic(const unsigned char *m)
{
	return m[0] == 0xFE && m[1] == 'S' && m[2] == 'M' && m[3] == 'B';
}

/*
 * An SMB2 NEGOTIATE request offering the given dialects (no negotiate
 * contexts, so not 0x0311). Returns its length.
 */
static inline size_t sd_smb2_negotiate_request(unsigned char *buf, const uint16_t *dialects,
					       int count)
{
	unsigned char *body = buf + SMB2_HEADER_SIZE;
	int i;

	memset(buf, 0, SMB2_HEADER_SIZE + 36 + 2 * count);
	buf[0] = 0xFE;
	buf[1] = 'S';
	buf[2] = 'M';
	buf[3] = 'B';
	sd_put16(buf + 4, SMB2_HEADER_SIZE);	/* StructureSize */
	sd_put16(buf + 12, SMB2_NEGOTIATE);	/* Command */
	sd_put16(buf + 14, 1);			/* CreditRequest */
	/* MessageId 0, TreeId 0, SessionId 0, no signature. */
	sd_put16(body, 36);			/* StructureSize */
	sd_put16(body + 2, count);		/* DialectCount */
	sd_put16(body + 4, 0x0001);		/* SecurityMode: signing enabled */
	sd_put32(body + 8, 0);			/* Capabilities */
	for (i = 0; i < 16; i++)		/* ClientGuid */
		body[12 + i] = 0x5d + i;
	for (i = 0; i < count; i++)
		sd_put16(body + 36 + 2 * i, dialects[i]);
	return SMB2_HEADER_SIZE + 36 + 2 * count;
}

/* NULL if m (len bytes) is a well-formed NEGOTIATE request; else why not. */
static inline const char *sd_smb2_check_negotiate_request(const unsigned char *m, size_t len)
{
	const unsigned char *body = m + SMB2_HEADER_SIZE;

	if (len < SMB2_HEADER_SIZE + 36)
		return "shorter than header + NEGOTIATE request";
	if (!sd_smb2_magic(m))
		return "ProtocolId is not 0xFE 'S' 'M' 'B'";
	if (sd_le16(m + 4) != SMB2_HEADER_SIZE)
		return "header StructureSize is not 64";
	if (sd_le16(m + 12) != SMB2_NEGOTIATE)
		return "command is not NEGOTIATE";
	if (sd_le32(m + 16) & SMB2_FLAGS_SERVER_TO_REDIR)
		return "a request with SERVER_TO_REDIR set";
	if (sd_le16(body) != 36)
		return "NEGOTIATE StructureSize is not 36";
	if (!sd_le16(body + 2) || SMB2_HEADER_SIZE + 36 + 2 * (size_t)sd_le16(body + 2) > len)
		return "DialectCount is 0 or runs past the message";
	return NULL;
}

/*
 * NULL if m (len bytes) is a successful NEGOTIATE response choosing one of
 * the offered dialects; else why not. *dialect gets the chosen one.
 */
static inline const char *sd_smb2_check_negotiate_response(const unsigned char *m, size_t len,
							   const uint16_t *offered, int count,
							   uint16_t *dialect)
{
	const unsigned char *body = m + SMB2_HEADER_SIZE;
	static char why[96];
	int i;

	if (len < SMB2_HEADER_SIZE + 64)
		return "shorter than header + NEGOTIATE response";
	if (!sd_smb2_magic(m))
		return "ProtocolId is not 0xFE 'S' 'M' 'B'";
	if (sd_le16(m + 4) != SMB2_HEADER_SIZE)
		return "header StructureSize is not 64";
	if (sd_le16(m + 12) != SMB2_NEGOTIATE)
		return "command is not NEGOTIATE";
	if (!(sd_le32(m + 16) & SMB2_FLAGS_SERVER_TO_REDIR))
		return "Flags lack SMB2_FLAGS_SERVER_TO_REDIR";
	if (sd_le32(m + 8) != 0) {
		snprintf(why, sizeof(why), "Status 0x%08x", sd_le32(m + 8));
		return why;
	}
	if (sd_le16(body) != 65)
		return "NEGOTIATE response StructureSize is not 65";
	*dialect = sd_le16(body + 4);
	for (i = 0; i < count; i++)
		if (offered[i] == *dialect)
			return NULL;
	snprintf(why, sizeof(why), "dialect 0x%04x was not offered", *dialect);
	return why;
}

#endif /* SD_SMB2_H */
