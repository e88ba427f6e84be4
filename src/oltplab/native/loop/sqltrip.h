/*
 * --mode sql on MariaDB, what every workload's statements share (a workload's MySqlOps writes
 * its transaction through these): a round trip's multi-statement text, written with its
 * bound checked into the transaction's buffer, and what each statement's answer is; the
 * problem that stops the run when a text would not fit or an answer lacks what the
 * transaction needs (never a write past the buffer).
 */
#ifndef OLTPLAB_SQLTRIP_H
#define OLTPLAB_SQLTRIP_H

#include "workload.h"

#define TRIP_MAX 64 /* statements in one round trip */

/* The workload's next round trip into the text, when the last one's answers are all in: 1
 * written, 0 a problem, 2 the transaction is finished. */
typedef int (*trip_next_fn)(MyTxn *t);

typedef struct {
    uint8_t q[TRIP_MAX], tag[TRIP_MAX]; /* each statement, and whose answer it is (a line ...) */
    int nq, qi, rolling_back;
    char problem[160];
    int rollback;          /* the workload's index of its ROLLBACK */
    trip_next_fn next;
    int64_t value;         /* what the transaction returned, as its procedure would */
    size_t cap, len;       /* the text: cap bytes, len used */
    char *text;
} SqlTrip;

/* A workload's MyTxn begins with its SqlTrip: these are its MySqlOps but for inputs, start
 * and result. trip_new: a zeroed MyTxn of size bytes and, after it, its text of cap
 * bytes (64 at least); NULL when out of memory. */
MyTxn *trip_new(size_t size, size_t cap, int rollback, trip_next_fn next);
void trip_destroy(MyTxn *t);
const char *trip_text(const MyTxn *t, unsigned long *len);
long long trip_value(const MyTxn *t);
const char *trip_problem(const MyTxn *t);
int trip_rollback(MyTxn *t); /* after an error: the ROLLBACK alone */
/* Every answer of the round trip is in: 1 the next trip's text is ready, 0 the transaction is
 * over, -1 a problem (trip_problem). */
int trip_next(MyTxn *t);

/* The problem, said once (the first stays): 0. */
int trip_fail(SqlTrip *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append to the text: 1, or 0 (the problem said) when it would not fit. */
int trip_add(SqlTrip *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Begin the next statement (q, answering for tag): 0 when the round trip is full. */
int trip_stmt(SqlTrip *t, int q, int tag);
/* A new round trip: no text, no statement. */
void trip_begin(SqlTrip *t);
/* The statement the next answer belongs to (*q, *tag): 0 (a problem) when none does. */
int trip_answer(SqlTrip *t, int *q, int *tag);
/* An integer column: the whole text must be one; 0 with a problem else. */
int trip_int(SqlTrip *t, const char *s, int64_t *out);

#endif
