// The libdbus calls the desktop notifier makes, with the type codes (C macros Swift does
// not import) spelled out once here. Nothing else: the Swift side owns the handles.
#include <dbus/dbus.h>

static inline int hp_dbus_append_string(DBusMessageIter *iter, const char *value) {
    return dbus_message_iter_append_basic(iter, DBUS_TYPE_STRING, &value);
}
static inline int hp_dbus_append_uint32(DBusMessageIter *iter, dbus_uint32_t value) {
    return dbus_message_iter_append_basic(iter, DBUS_TYPE_UINT32, &value);
}
static inline int hp_dbus_append_int32(DBusMessageIter *iter, dbus_int32_t value) {
    return dbus_message_iter_append_basic(iter, DBUS_TYPE_INT32, &value);
}
/// Opens an array of `element_signature` ("s", "{sv}") inside `iter`.
static inline int hp_dbus_open_array(DBusMessageIter *iter, const char *element_signature, DBusMessageIter *sub) {
    return dbus_message_iter_open_container(iter, DBUS_TYPE_ARRAY, element_signature, sub);
}
/// One `{sv}` entry whose value is a string.
static inline int hp_dbus_append_string_hint(DBusMessageIter *dict, const char *key, const char *value) {
    DBusMessageIter entry, variant;
    if (!dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry)) return 0;
    if (!dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key)) return 0;
    if (!dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "s", &variant)) return 0;
    if (!dbus_message_iter_append_basic(&variant, DBUS_TYPE_STRING, &value)) return 0;
    if (!dbus_message_iter_close_container(&entry, &variant)) return 0;
    return dbus_message_iter_close_container(dict, &entry);
}
/// The reply's single uint32 (Notify's notification id).
static inline int hp_dbus_reply_uint32(DBusMessage *reply, dbus_uint32_t *out, DBusError *error) {
    return dbus_message_get_args(reply, error, DBUS_TYPE_UINT32, out, DBUS_TYPE_INVALID);
}
/// A signal's `(uint32, string)` arguments (ActionInvoked: the notification id, the action key).
static inline int hp_dbus_args_uint32_string(DBusMessage *message, dbus_uint32_t *number, const char **text, DBusError *error) {
    return dbus_message_get_args(message, error, DBUS_TYPE_UINT32, number, DBUS_TYPE_STRING, text, DBUS_TYPE_INVALID);
}
/// A signal's `(uint32, uint32)` arguments (NotificationClosed: the notification id, the reason).
static inline int hp_dbus_args_uint32_uint32(DBusMessage *message, dbus_uint32_t *first, dbus_uint32_t *second, DBusError *error) {
    return dbus_message_get_args(message, error, DBUS_TYPE_UINT32, first, DBUS_TYPE_UINT32, second, DBUS_TYPE_INVALID);
}
