/*
 * oltplab._native: the virtual users' hot path in C. What the parts share.
 *
 * terminal.c  Terminal: one virtual user's random generator, card deck and transaction inputs
 * pq.c        the libpq functions, from the very library psycopg loaded
 * procloop.c  ProcLoop: a worker's users over epoll, without the GIL, whatever the transport
 * procloop_type.c  the Python type around that loop (procloop.h: what the two share)
 * pqloop.c    ProcLoop's libpq transport
 * sqlloop.c   --mode sql in ProcLoop: each type's statements as round trips in pipeline mode
 * mariadb.c   libmariadb, opened at run time, and MariaDBConnection (mariadb.h)
 * myloop.c    MariaDBLoop: ProcLoop's libmariadb transport (procedures mode, --mode sql)
 * mytxn.c     --mode sql on MariaDB: each type's statements as multi-statement round trips
 * module.c    the module and its constants
 */
#ifndef OLTPLAB_NATIVE_H
#define OLTPLAB_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ */
/* The mix (clause 5.2) and the input ranges                                                  */

#define NKINDS 5
#define DECK_SIZE 100
extern const int WEIGHTS[NKINDS];          /* cards per 100 [5.2.3] */
extern const double KEYING_S[NKINDS];      /* [5.2.5.7] */
extern const double THINK_MEAN_S[NKINDS];
extern const double THINK_CAP;             /* think times truncated at 10x their mean [5.2.5.4] */
extern const char *const NAMES[NKINDS];
enum { NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL };

#define DISTRICTS 10
#define CUSTOMERS 3000
#define ITEMS 100000
#define NOT_AN_ITEM (ITEMS + 1) /* the unused item id of the 1% rolled-back New-Orders */
#define A_C_LAST 255
#define A_C_ID 1023
#define A_OL_I_ID 8191
#define MAX_ARGS 7
#define MAX_LINES 15 /* order lines of a New-Order: 5..15 [2.4.1.3] */
/* an argument as text: at most '{' + 15 x (10 digits and a comma) + '}' for the arrays */
#define ARG_TEXT 192
/* an int32 takes at most 11 characters and its separator one more: the arrays always fit, and
 * txn_text's bound checks only guard against a change of these figures */
_Static_assert(ARG_TEXT >= 2 + MAX_LINES * 12, "ARG_TEXT must hold 15 ints as {..}");

/* ------------------------------------------------------------------------------------------ */
/* Random numbers: xoshiro256** seeded by splitmix64                                          */

typedef struct {
    uint64_t s[4];
} rng_t;

static inline uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void rng_seed(rng_t *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(rng_t *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* uniform on [0, 1) with 53 random bits */
static inline double rng_unit(rng_t *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* "random within [lo..hi]" [2.1.4]: the high word of a 64x64-bit product, uniform to within
 * (hi - lo + 1) / 2^64 */
static inline int64_t uniform(rng_t *r, int64_t lo, int64_t hi) {
    uint64_t n = (uint64_t)(hi - lo + 1);
    return lo + (int64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x  [2.1.6] */
static inline int64_t nurand(rng_t *r, int64_t A, int64_t x, int64_t y, int64_t C) {
    int64_t a = uniform(r, 0, A);
    int64_t b = uniform(r, x, y);
    return (((a | b) + C) % (y - x + 1)) + x;
}

/* ------------------------------------------------------------------------------------------ */
/* Terminal                                                                                   */

typedef struct {
    PyObject_HEAD
    rng_t rng;
    uint8_t cards[DECK_SIZE];
    int next_card;
    int w_max, stock_d_id;
    int c_id, c_ol_i_id, c_last; /* the run's C constants [2.1.6] */
    int nwh;                     /* warehouses it works on: its home, or the dealt ones */
    int *warehouses;             /* nwh of them; NULL until __init__ succeeds */
    int driven;                  /* ProcLoops that hold it: Python must keep its hands off */
} Terminal;

/* One transaction's inputs, as drawn: the arguments of the kind's PL/pgSQL function (the
 * scalars, then New-Order's three arrays of order lines) and what the input counts need. */
enum { OL_I_ID, OL_SUPPLY_W_ID, OL_QUANTITY };
typedef struct {
    int kind;
    int nargs;    /* arguments of the function */
    int nscalars; /* of them, the leading scalars in a[]; New-Order's arrays follow */
    int64_t a[MAX_ARGS];
    int ol_cnt;
    int32_t lines[3][MAX_LINES]; /* New-Order: OL_I_ID, OL_SUPPLY_W_ID, OL_QUANTITY per line */
    int remote_lines;            /* New-Order: lines whose supply warehouse is not the home */
    int remote;                  /* Payment: the customer's warehouse is not the home */
    int by_name;                 /* Payment, Order-Status: the customer selected by last name */
} txn_t;

extern PyTypeObject TerminalType;
int term_check(Terminal *t);
int term_draw_kind(Terminal *t);
int term_warehouse(Terminal *t);
int64_t other_warehouse(Terminal *t, int64_t w_id);
void term_inputs(Terminal *t, int kind, int64_t w_id, txn_t *x);
int txn_text(const txn_t *x, char (*text)[ARG_TEXT]);
double term_think(Terminal *t, int kind);
int fmt_cents(char *buf, size_t n, int64_t cents);
void fmt_last_name(char *buf, size_t n, int64_t num);
int txn_copy(const txn_t *x, int64_t *a, int64_t (*lines)[3], int *ol_cnt);
void lines_in_lock_order(const int64_t (*lines)[3], int n, int *order);
void stock_rule(const int64_t (*lines)[3], const int *order, int n, const int *found,
                int64_t *s_quantity);

/* ------------------------------------------------------------------------------------------ */
/* libpq, as loaded by psycopg                                                                */

typedef void PGconn;
typedef void PGresult;
enum { CONNECTION_OK = 0 };
enum { PGRES_COMMAND_OK = 1, PGRES_TUPLES_OK = 2 };
#define PG_DIAG_SQLSTATE 'C'
#define PG_DIAG_MESSAGE_PRIMARY 'M'

struct pq_api {
    int loaded;
    int (*sendQueryPrepared)(PGconn *, const char *, int, const char *const *, const int *,
                             const int *, int);
    int (*sendQuery)(PGconn *, const char *);
    int (*flush)(PGconn *);
    int (*consumeInput)(PGconn *);
    int (*isBusy)(PGconn *);
    PGresult *(*getResult)(PGconn *);
    int (*resultStatus)(const PGresult *);
    int (*ntuples)(const PGresult *);
    int (*getisnull)(const PGresult *, int, int);
    char *(*getvalue)(const PGresult *, int, int);
    char *(*resultErrorField)(const PGresult *, int);
    void (*clear)(PGresult *);
    int (*status)(const PGconn *);
    char *(*errorMessage)(const PGconn *);
    int (*socket)(const PGconn *);
    int (*enterPipelineMode)(PGconn *); /* libpq >= 14 */
    int (*exitPipelineMode)(PGconn *);
    int (*pipelineSync)(PGconn *);
    char *(*cmdTuples)(PGresult *);
};
extern struct pq_api pq;
int load_libpq(const char *path);
int pq_has_pipeline(void);

/* ------------------------------------------------------------------------------------------ */
/* ProcLoop                                                                                   */

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* Python's time.monotonic_ns() */
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* --mode sql (sqlloop.c): one user's transaction in progress */
typedef struct SqlTxn SqlTxn;
enum { SQL_WAIT, SQL_DONE, SQL_ERROR, SQL_LOST, SQL_BROKEN }; /* what sql_read found */
extern const char *const SQL_STATEMENTS[]; /* the prepared statements' names, NULL-ended */
SqlTxn *sql_new(void);
void sql_free(SqlTxn *s);
void sql_inputs(SqlTxn *s, const txn_t *x);
int sql_start(SqlTxn *s, PGconn *c);
int sql_read(SqlTxn *s, PGconn *c);
int sql_rollback(SqlTxn *s, PGconn *c);
PGresult *sql_take(SqlTxn *s);
const PGresult *sql_failure(const SqlTxn *s);
long long sql_value(const SqlTxn *s);
const char *sql_problem(const SqlTxn *s);

enum { EV_BOUNDARY = 0, EV_FINISHED = 1, EV_SAMPLES = 2, EV_FAILED = 3, EV_STOPPED = 4,
       EV_LOST = 5, EV_WOKEN = 6 };
extern PyTypeObject ProcLoopType;

#endif
