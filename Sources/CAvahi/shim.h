#ifndef CAVAHI_SHIM_H
#define CAVAHI_SHIM_H
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/alternative.h>
#include <avahi-common/address.h>
#include <avahi-common/strlst.h>
#include <avahi-common/timeval.h>
#include <net/if.h>

// Typed constants: the C enums and macros import as Int or not at all.
static const AvahiIfIndex cavahi_if_unspec = AVAHI_IF_UNSPEC;
static const AvahiProtocol cavahi_proto_unspec = AVAHI_PROTO_UNSPEC;
static const AvahiProtocol cavahi_proto_inet = AVAHI_PROTO_INET;
static const AvahiProtocol cavahi_proto_inet6 = AVAHI_PROTO_INET6;
static const int cavahi_err_collision = AVAHI_ERR_COLLISION;
static const AvahiLookupResultFlags cavahi_result_own = AVAHI_LOOKUP_RESULT_OUR_OWN;
static const AvahiLookupResultFlags cavahi_result_local = AVAHI_LOOKUP_RESULT_LOCAL;
#endif
