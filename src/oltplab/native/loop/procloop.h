/*
 * What the two halves of ProcLoop share: procloop.c drives the users without the GIL,
 * procloop_type.c is the Python type around it (init, run, counts, samples).
 */
#ifndef OLTPLAB_PROCLOOP_H
#define OLTPLAB_PROCLOOP_H

#include "workload.h"

/* a user's state; S_LOST: its connection is gone and Python opens another (resilient mode),
 * S_RESUME: it has the new one and starts a new cycle at the next run(), S_HELD: it crossed
 * ramp_end and waits for go() */
enum { S_READY, S_TXN, S_FLUSH, S_SLEEP, S_DONE, S_LOST, S_RESUME, S_HELD };
enum { THEN_CYCLE, THEN_SUBMIT, THEN_SLEEP };               /* what follows a wait/crossing */
#define MAX_STATES 16
#define MAX_CODES 16
/* MariaDB: one transaction's text, "CALL proc(args..., @o); SELECT @o" */
#define QUERY_TEXT 4096
/* libpq: a call with its begin as one simple query (Workload.pq_begin) */
#define SIMPLE_TEXT 4096
#define LIVE_RECENT 100 /* the units whose worst response time the live figures give */

typedef struct {
    void *conn; /* the transport's connection: a PGconn, a MYSQL */
    int fd;
    uint32_t events; /* what epoll watches on fd: EPOLLIN, and EPOLLOUT while output waits */
    PyObject *term; /* the workload's terminal object */
    int state, kind, nargs, retries, errors;
    int after_sleep, after_cross;
    int64_t start, next, wake, last_end;
    int pending;  /* a transaction ended since the last statistics flush */
    int inflight; /* a transaction was sent and its outcome is not recorded yet */
    _Alignas(16) unsigned char drawn[TXN_BYTES]; /* the transaction's inputs, as drawn */
    union {
        struct { /* libpq (pqloop.c) */
            PGresult *held; /* the query's result, until libpq has seen the end of its answer */
            SqlTxn *sql;    /* --mode sql: the transaction's statements and what they returned */
            char text[MAX_CALL_ARGS][ARG_TEXT];
            const char *values[MAX_CALL_ARGS];
            int simple;                /* the call goes as simple[] (Workload.pq_begin) */
            char simple_text[SIMPLE_TEXT];
        };
        struct { /* libmariadb (myloop.c) */
            int phase;       /* which call of the answer is under way */
            int waiting;     /* the MYSQL_WAIT_ status it waits for; 0: the call starts */
            int has;         /* the last result set had a value */
            int rows;        /* rows of the answer so far (Workload.row) */
            long long value; /* ... this one */
            int outcome;     /* the answer's, when it waits for the next turn (P_DONE) */
            MyTxn *txn;      /* --mode sql: the transaction's round trips */
            char message[384]; /* --mode sql: the error a ROLLBACK ends before a retry */
            int qlen;
            char query[QUERY_TEXT];
        };
    };
} User;

typedef struct Transport Transport;

typedef struct {
    PyObject_HEAD
    const Transport *tp; /* how the users' transactions travel: libpq or libmariadb */
    const Workload *wl;  /* what they run */
    PyObject *terms;  /* the terminal objects, kept alive */
    PyObject *conns;  /* the psycopg connection objects, kept alive */
    User *users;
    int n, epfd, stopfd;
    int waits, flush_stats, max_retries, max_errors;
    int64_t ramp_end, stop_at, idle_published_after;
    char names[MAX_KINDS][64]; /* libpq: the prepared functions, by kind */
    char *flush_sql;
    char retryable[MAX_STATES][6], fatal[MAX_STATES][6];
    int nretryable, nfatal;
    int sql_mode;                                    /* --mode sql */
    Py_ssize_t sql_text_bytes; /* libmariadb, --mode sql: a round trip's text at most */
    int retry_codes[MAX_CODES], lost_codes[MAX_CODES]; /* libmariadb: error numbers */
    int nretry_codes, nlost_codes;
    int ready; /* __init__ succeeded: every method but __init__ needs it */
    int started, running, sleeping, failed, boundary_told;
    int resilient;   /* a lost connection loses the user, not the run (--inject) */
    int stopping;    /* stop() asked: the eventfd means STOPPED, else WOKEN */
    /* hold(): a user that crosses ramp_end waits there (S_HELD, ``held`` of them) until go()
     * says the server's counters are read, so that they count from the same instant */
    int hold_ramp, go, held;
    int *lost;       /* n entries: users lost since Python last took them (take_lost) */
    int nlost;
    int64_t lost_total; /* users lost, every phase */
    char error[512];
    /* the recorder: the same rules as engines/common/recorder.py's Recorder */
    int64_t committed[MAX_KINDS], rolled_back[MAX_KINDS], errors[MAX_KINDS],
        retries[MAX_KINDS], total_us[MAX_KINDS];
    int64_t completed, headline; /* every phase; headline: the workload's DONE_HEADLINE */
    /* The units (a workload's unit row) begun in the window so far, read while the loop runs
     * (the ``live`` getter, atomics): how many, their response times' sum, how many rolled
     * back, and the last LIVE_RECENT response times (a ring: the worst of the last 100). */
    int64_t live_units, live_unit_us, live_rolled_back, live_next;
    int64_t live_recent[LIVE_RECENT];
    int64_t inputs[MAX_INPUTS];  /* the measured window */
    int64_t *samples[MAX_KINDS]; /* bulk entries each: the loop stops at a full one [samples_full] */
    Py_ssize_t nsamples[MAX_KINDS], bulk;
    int crossed[2];
    int64_t *cross_ns[2];
    int ncross_ns[2];
} ProcLoop;


/* What a transaction's answer was, as the transport classifies it (txn_end). */
enum {
    OUT_DONE,  /* committed, or rolled back by design (the workload tells: Workload.completed) */
    OUT_RETRY, /* rolled back by a deadlock or the like: the same inputs again */
    OUT_ERROR, /* failed: counted, and the user carries on */
    OUT_FATAL, /* fails the run with the server's message */
    OUT_LOST   /* the session is gone: the user is lost (resilient) or the run fails */
};

/* A transport: how one user's transaction travels. Every call runs without the GIL but
 * attach and detach (with it, from __init__, replace() and release). */
struct Transport {
    /* Format the transaction's request from its inputs (u->txn); -1 when it does not fit. */
    int (*prepare)(ProcLoop *L, User *u);
    /* Send it (u->state is S_TXN): on failure report it (user_lost) */
    void (*send)(ProcLoop *L, User *u);
    /* The socket is ready (epoll's events): go on, then txn_end once the answer is in. */
    void (*ready)(ProcLoop *L, User *u, uint32_t events);
    /* Ask the server to publish its statistics, then user_crossed(); NULL: never needed. */
    void (*flush)(ProcLoop *L, User *u);
    /* Drop what the user's transaction held (end: the loop goes away, free everything). */
    void (*forget)(ProcLoop *L, User *u, int end);
    /* Take the connection (Python's object, and the pointer Python passed or NULL) for u:
     * set u->conn and u->fd; -1 with an exception. detach: the loop lets it go. */
    int (*attach)(ProcLoop *L, User *u, PyObject *conn, PyObject *ptr);
    void (*detach)(PyObject *conn);
};
extern const Transport PQ_TRANSPORT, MY_TRANSPORT;

/* What the transports call back (procloop.c). */
void loop_fail(ProcLoop *L, const char *fmt, const char *what, const char *detail);
void user_lost(ProcLoop *L, User *u, const char *what, const char *message);
void user_lose(ProcLoop *L, User *u);
int user_watch(ProcLoop *L, User *u, uint32_t events);
void user_crossed(ProcLoop *L, User *u, int64_t flushed_ns);
void txn_end(ProcLoop *L, User *u, int outcome, int has, long long value, const char *message);
void first_line(char *s);

/* The Python type's shared parts (procloop_type.c) */
int loop_workload(ProcLoop *self, const char *name);
int loop_setup(ProcLoop *self, const Transport *tp, PyObject *conns, PyObject *ptrs,
               PyObject *terms, long long ramp_end, long long stop_at, int waits,
               int max_retries, int max_errors, Py_ssize_t bulk, int resilient);
void loop_release(ProcLoop *self);

/* Drive the users until the next event: one of the EV_ codes. Runs without the GIL. */
int loop_run(ProcLoop *L);

#endif
