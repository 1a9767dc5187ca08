// Non-variadic wrappers around libmicrohttpd's variadic calls, which Swift cannot import.
#ifndef FLOWSTACK_CMICROHTTPD_SHIM_H
#define FLOWSTACK_CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/select.h>
#include <netinet/in.h>
#include <pthread.h>
#include <microhttpd.h>

/// glibc's, which <pthread.h> declares only under _GNU_SOURCE: names the accepting thread.
extern int pthread_setname_np(pthread_t thread, const char *name);

/// Leaves the URL and query arguments as sent: the Swift layer splits the path into segments
/// first and decodes each one, so an encoded "/" or NUL cannot change which route matches.
static inline size_t flowstack_keep_escapes(void *cls, struct MHD_Connection *connection, char *text)
{
    (void)cls;
    (void)connection;
    size_t length = 0;
    while (text[length] != 0) length++;
    return length;
}

/// Starts a daemon with the options FlowStack sets, without a listening socket of its own:
/// connections come from `MHD_add_connection` (see Listener.swift for why). `notify` hears each
/// connection start and close.
static inline struct MHD_Daemon *flowstack_start_daemon(
    unsigned int flags,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    MHD_NotifyConnectionCallback notify, void *notify_cls,
    unsigned int thread_pool_size, unsigned int connection_timeout,
    unsigned int connection_limit, unsigned int per_ip_limit,
    size_t connection_memory_limit)
{
    return MHD_start_daemon(flags | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, handler, handler_cls,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_UNESCAPE_CALLBACK, flowstack_keep_escapes, NULL,
        MHD_OPTION_END);
}

/// The client's address of a connection, or NULL.
static inline const struct sockaddr *flowstack_client_address(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/// The socket of a connection, or -1.
static inline int flowstack_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// A response holding its own copy of `size` bytes at `data`.
static inline struct MHD_Response *flowstack_response_copy(size_t size, const void *data)
{
    return MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY);
}

/// Never called: a 304 has no body (libmicrohttpd does not read one for it).
static inline ssize_t flowstack_no_body(void *cls, uint64_t position, char *buffer, size_t size)
{
    (void)cls; (void)position; (void)buffer; (void)size;
    return MHD_CONTENT_READER_END_OF_STREAM;
}

/// The response of a 304 Not Modified. libmicrohttpd 0.9.75 writes a 304's Content-Length from
/// the response's size (a 304 built from an empty buffer says `Content-Length: 0`, which RFC 9110
/// §8.6 forbids), so the size given is the length of the body a 200 would have carried
/// (`length`), and no byte of it is ever sent. With `length` negative (not known) it leaves
/// Content-Length out; 0.9.75 frames a body-less answer of unknown size only by closing the
/// connection after it (HTTP/1.0-compatible mode; otherwise it would send a chunked terminator).
static inline struct MHD_Response *flowstack_response_not_modified(int64_t length)
{
    if (length >= 0) {
        return MHD_create_response_from_callback((uint64_t)length, 1024, flowstack_no_body, NULL, NULL);
    }
    struct MHD_Response *response =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, flowstack_no_body, NULL, NULL);
    if (response != NULL) {
        (void)MHD_set_response_options(response, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END);
    }
    return response;
}

#endif
