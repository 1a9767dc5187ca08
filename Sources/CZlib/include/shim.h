// zlib's gzip compression in one call, since deflateInit2 is a macro Swift cannot import.
#ifndef FLOWSTACK_CZLIB_SHIM_H
#define FLOWSTACK_CZLIB_SHIM_H

#include <stddef.h>
#include <string.h>
#include <zlib.h>

/// The most bytes `flowstack_gzip` can write for `size` input bytes (zlib's bound plus the gzip
/// header and trailer).
static inline size_t flowstack_gzip_bound(size_t size)
{
    return (size_t)compressBound((uLong)size) + 32;
}

/// Writes `size` bytes at `input` as one gzip member (RFC 1952) into `output`, which has room
/// for `capacity` bytes; returns the bytes written, or 0 when zlib failed or the room ran out.
static inline size_t flowstack_gzip(const void *input, size_t size, void *output, size_t capacity, int level)
{
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    /* 15 + 16: the largest window, with a gzip header and trailer instead of zlib's. */
    if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)size;
    stream.next_out = (Bytef *)output;
    stream.avail_out = (uInt)capacity;
    int result = deflate(&stream, Z_FINISH);
    size_t written = (size_t)stream.total_out;
    deflateEnd(&stream);
    return result == Z_STREAM_END ? written : 0;
}

/// Decodes one gzip member at `input` into `output` (room for `capacity` bytes); returns the
/// bytes written, or -1 when the input is not whole, valid gzip or the room ran out. The
/// server never reads gzip; tests use it to check what it sent.
static inline long flowstack_gunzip(const void *input, size_t size, void *output, size_t capacity)
{
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit2(&stream, 15 + 16) != Z_OK) return -1;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)size;
    stream.next_out = (Bytef *)output;
    stream.avail_out = (uInt)capacity;
    int result = inflate(&stream, Z_FINISH);
    long written = (long)stream.total_out;
    inflateEnd(&stream);
    return result == Z_STREAM_END ? written : -1;
}

#endif
