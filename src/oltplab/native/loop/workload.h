/*
 * A workload, as the loop drives it: its transaction kinds, how a user's terminal draws the
 * next transaction and waits, how the transports send that transaction, and what a completed
 * one counts. The loop (procloop.c, pqloop.c, myloop.c) knows a transaction only as its kind
 * (an index into ``kinds``) and an opaque buffer of TXN_BYTES the workload fills and reads;
 * Python names the workload when it makes the loop (workloads.c holds the compiled ones).
 *
 * A unit of several calls (an order made of a login, browses and a purchase, with think time
 * between them) is one kind per call: the terminal keeps where the user is in its unit, draw
 * returns the next call's kind, keying and think give the times between calls, and completed
 * sets DONE_HEADLINE on the call that completes the unit. Such a workload may have the loop
 * record the unit itself as one more row after its kinds (``unit``): completed sets DONE_UNIT
 * on the call that ends a unit and gives the unit's response time (the sum of its calls').
 */
#ifndef OLTPLAB_WORKLOAD_H
#define OLTPLAB_WORKLOAD_H

#include "native.h"
#include <mariadb/mysql.h>

#define MAX_KINDS 16   /* transaction kinds of a workload, its unit row included */
#define MAX_INPUTS 24  /* input counts of a workload */
#define TXN_BYTES 512  /* one drawn transaction, as the workload holds it */
#define MAX_CALL_ARGS 20 /* libpq: the arguments of one call of a prepared function */
#define ARG_TEXT 1024  /* ... each one's text, its terminating NUL included */
#define KIND_WAIT (-1) /* draw: nothing to send yet (Workload.idle) */

/* What a completed transaction counts as (Workload.completed). */
enum {
    DONE_HEADLINE = 1,   /* one unit of the headline figure */
    DONE_ROLLED_BACK = 2, /* ended by design, not by an error: counted apart from the commits */
    DONE_UNIT = 4         /* it ended a unit (Workload.unit): the loop records the unit row,
                           * committed or (DONE_ROLLED_BACK) rolled back, with unit_us */
};

/* --mode sql on libpq: a user's transaction as its statements in pipelined round trips. */
typedef struct SqlTxn SqlTxn;
enum { SQL_WAIT, SQL_DONE, SQL_ERROR, SQL_LOST, SQL_BROKEN }; /* what read found */
typedef struct {
    SqlTxn *(*create)(void);
    void (*destroy)(SqlTxn *s);
    void (*inputs)(SqlTxn *s, const void *txn); /* kept for the retries */
    int (*start)(SqlTxn *s, PGconn *c);      /* 0: libpq refused to send, or the call
                                              * was refused (problem set) */
    int (*read)(SqlTxn *s, PGconn *c);       /* the answers so far: one of SQL_ */
    int (*rollback)(SqlTxn *s, PGconn *c);   /* after SQL_ERROR; 0: libpq refused */
    PGresult *(*take)(SqlTxn *s);            /* the outcome's result, the caller's */
    const PGresult *(*failure)(const SqlTxn *s); /* the failed statement's result */
    long long (*value)(const SqlTxn *s);     /* what the transaction returned */
    const char *(*problem)(const SqlTxn *s); /* why it broke (SQL_BROKEN) */
} PqSqlOps;

/* --mode sql on libmariadb: a user's transaction as multi-statement round trips. */
typedef struct MyTxn MyTxn;
typedef struct {
    MyTxn *(*create)(size_t text_bytes);
    void (*destroy)(MyTxn *t);
    void (*inputs)(MyTxn *t, const void *txn);
    int (*start)(MyTxn *t);                  /* 0: the first round trip did not fit */
    int (*rollback)(MyTxn *t);               /* 0: the ROLLBACK did not fit */
    int (*result)(MyTxn *t, MYSQL_RES *res); /* a statement's answer; 0: unexpected */
    int (*next)(MyTxn *t);                   /* after a round trip: 1 another, 0 done, -1 broken */
    const char *(*text)(const MyTxn *t, unsigned long *len); /* the round trip's text */
    long long (*value)(const MyTxn *t);
    const char *(*problem)(const MyTxn *t);
} MySqlOps;

typedef struct {
    const char *name;          /* as Python names it */
    int nkinds;                /* 1..MAX_KINDS - unit */
    const char *const *kinds;  /* the kinds' names, in Python's order */
    int unit;                  /* 1: the loop records the unit at row nkinds (DONE_UNIT) */
    const char *unit_name;     /* ... that row's name */
    int ninputs;               /* 0..MAX_INPUTS */
    const char *const *input_keys; /* the keys of counts()["inputs"] */
    /* A user's terminal: 0 when it is the workload's, ready and driven by no loop, else -1
     * with an exception; hold(term, +1 or -1): a loop takes it or lets it go. */
    int (*accept)(PyObject *term);
    void (*hold)(PyObject *term, int by);
    /* Draw the next transaction into txn (TXN_BYTES, kept for its retries): its kind; or
     * KIND_WAIT (a terminal that answers events, such as a market emulator's actor, with
     * nothing due): the loop waits idle(term) seconds, then draws again. */
    int (*draw)(PyObject *term, void *txn);
    double (*idle)(PyObject *term); /* NULL: draw never answers KIND_WAIT */
    /* Seconds to wait before sending a transaction of the kind, and after it ended. */
    double (*keying)(PyObject *term, int kind);
    double (*think)(PyObject *term, int kind);
    /* libpq: the arguments of the kind's function as text, at most max of ARG_TEXT bytes:
     * how many; -1 when one does not fit. */
    int (*pq_args)(const void *txn, char (*text)[ARG_TEXT], int max);
    /* libmariadb: "CALL proc(args..., out_var)" into buf (size bytes): its length; -1 when
     * it does not fit. */
    int (*my_call)(const void *txn, const char *out_var, char *buf, size_t size);
    /* libpq: the statement that begins the transaction (a level of isolation: "SET
     * TRANSACTION ISOLATION LEVEL SERIALIZABLE"), or NULL for none. With one, the call goes
     * with it as one simple query, an implicit transaction (a failure rolls all of it back),
     * "<begin>; EXECUTE <prepared>('arg', ...)"; without, as the prepared call alone. */
    const char *(*pq_begin)(const void *txn);
    /* The rows of the answer, in order across its result sets, each as text (NULL for a
     * NULL), before completed: index -1 first, when an answer begins (forget an earlier
     * attempt's). A workload that acts on a completed call's rows keeps them until then
     * (an answer may still end in an error after its rows). NULL: the loop reads the first
     * column of the first row alone (value). */
    void (*row)(void *txn, int index, int ncols, const char *const *values);
    /* With row: 1 when the workload acts on this call's rows; 0 (a read-only answer) and the
     * loop gives it index -1 alone and reads the value as without row. NULL: every call's. */
    int (*rows_wanted)(const void *txn);
    /* libmariadb: the procedure answers with its result set and has no OUT parameter (the
     * loop sends the CALL alone, without the SELECT of out_var) */
    int my_result_rows;
    /* A completed transaction that returned value (has: it returned one) and took us
     * microseconds (the response time the loop records): DONE_ bits; its inputs are added to
     * inputs[ninputs] unless NULL (outside the measured window). With DONE_UNIT, *unit_us is
     * the unit's response time. txn stays as it leaves it until the next draw, which may read
     * it (a unit's next call); a call that failed is not completed, and the next draw finds
     * txn as it drew it. */
    int (*completed)(void *txn, int has, long long value, int64_t us, int64_t *inputs,
                     int64_t *unit_us);
    const PqSqlOps *pq_sql; /* NULL: no --mode sql */
    const MySqlOps *my_sql;
    /* Add what Python reads of it (its terminal type, constants) to the module: 0, or -1
     * with an exception. */
    int (*add_to_module)(PyObject *m);
} Workload;

/* Whether Python may use a user's terminal object (type: its Python type's name): 0 when its
 * __init__ succeeded (ready) and no loop drives it (a loop runs it without the GIL), else -1
 * with RuntimeError. */
static inline int workload_term_free(const char *type, int ready, int driven) {
    if (!ready) {
        PyErr_Format(PyExc_RuntimeError, "the %s is not initialised", type);
        return -1;
    }
    if (driven) {
        PyErr_Format(PyExc_RuntimeError, "the %s is driven by a ProcLoop", type);
        return -1;
    }
    return 0;
}

/* The rows the loop records: one per kind, and the unit's when it has one. */
static inline int workload_rows(const Workload *wl) { return wl->nkinds + (wl->unit ? 1 : 0); }
/* A row's name: a kind's, or the unit's. */
static inline const char *workload_row_name(const Workload *wl, int row) {
    return row < wl->nkinds ? wl->kinds[row] : wl->unit_name;
}

extern const Workload *const WORKLOADS[]; /* the compiled ones, NULL-ended (workloads.c) */
/* NULL with ValueError when none is (or, a bug, its rows do not fit MAX_KINDS) */
const Workload *workload_named(const char *name);
/* Add value (a new reference, or NULL: making it failed) to the module as attr; steals it. */
int module_add(PyObject *m, const char *attr, PyObject *value);

#endif
