/* --mode sql on MariaDB: a round trip's text and its statements (sqltrip.h). */
#include <stdarg.h>

#include "sqltrip.h"

int trip_fail(SqlTrip *t, const char *fmt, ...) {
    if (!t->problem[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->problem, sizeof t->problem, fmt, ap);
        va_end(ap);
    }
    return 0;
}

int trip_add(SqlTrip *t, const char *fmt, ...) {
    size_t room = t->cap - t->len;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(t->text + t->len, room, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= room) {
        t->text[t->len] = 0;
        return trip_fail(t, "a statement text longer than its buffer (%zu bytes)", t->cap);
    }
    t->len += (size_t)w;
    return 1;
}

int trip_stmt(SqlTrip *t, int q, int tag) {
    if (t->nq >= TRIP_MAX)
        return trip_fail(t, "more than %d statements in one round trip", TRIP_MAX);
    if (t->len && !trip_add(t, ";")) return 0;
    t->q[t->nq] = (uint8_t)q;
    t->tag[t->nq++] = (uint8_t)tag;
    return 1;
}

void trip_begin(SqlTrip *t) {
    t->nq = t->qi = 0;
    t->len = 0;
    t->text[0] = 0;
}


int trip_answer(SqlTrip *t, int *q, int *tag) {
    if (t->qi >= t->nq) return trip_fail(t, "an answer to no statement");
    *q = t->q[t->qi];
    *tag = t->tag[t->qi++];
    return 1;
}

int trip_int(SqlTrip *t, const char *s, int64_t *out) {
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || end == s || *end || errno)
        return trip_fail(t, "not an integer: %.40s", s ? s : "NULL");
    *out = v;
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* The MySqlOps a workload's MyTxn shares: it begins with its SqlTrip                         */

MyTxn *trip_new(size_t size, size_t cap, int rollback, trip_next_fn next) {
    if (cap < 64) cap = 64;
    if (size < sizeof(SqlTrip)) return NULL;
    SqlTrip *t = PyMem_Calloc(1, size + cap);
    if (t) {
        t->text = (char *)t + size;
        t->cap = cap;
        t->rollback = rollback;
        t->next = next;
    }
    return (MyTxn *)t;
}

void trip_destroy(MyTxn *t) { PyMem_Free(t); }

const char *trip_text(const MyTxn *t, unsigned long *len) {
    const SqlTrip *trip = (const SqlTrip *)t;
    *len = (unsigned long)trip->len;
    return trip->text;
}

long long trip_value(const MyTxn *t) { return ((const SqlTrip *)t)->value; }

const char *trip_problem(const MyTxn *t) { return ((const SqlTrip *)t)->problem; }

int trip_rollback(MyTxn *t) {
    SqlTrip *trip = (SqlTrip *)t;
    trip->rolling_back = 1;
    trip_begin(trip);
    return trip_stmt(trip, trip->rollback, 0) && trip_add(trip, "ROLLBACK");
}

int trip_next(MyTxn *t) {
    SqlTrip *trip = (SqlTrip *)t;
    if (trip->problem[0]) return -1;
    if (trip->qi != trip->nq) {
        trip_fail(trip, "%d answers to %d statements", trip->qi, trip->nq);
        return -1;
    }
    if (trip->rolling_back) return 0;
    int r = trip->next(t);
    return r == 1 ? 1 : r == 2 ? 0 : -1;
}
