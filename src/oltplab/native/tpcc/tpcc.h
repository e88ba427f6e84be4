/*
 * The TPC-C-derived workload in C: what its parts share.
 *
 * terminal.c  Terminal: one virtual user's random generator, card deck and transaction inputs
 * workload.c  the workload as the loop drives it (loop/workload.h) and its module constants
 * sqlloop.c   --mode sql on libpq: each type's statements as round trips in pipeline mode
 * mytxn.c     --mode sql on MariaDB: each type's statements as multi-statement round trips
 */
#ifndef OLTPLAB_TPCC_H
#define OLTPLAB_TPCC_H

#include "text.h"
#include "workload.h"

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
_Static_assert(NKINDS <= MAX_KINDS, "the loop holds MAX_KINDS kinds");

#define DISTRICTS 10
#define CUSTOMERS 3000
#define ITEMS 100000
#define NOT_AN_ITEM (ITEMS + 1) /* the unused item id of the 1% rolled-back New-Orders */
#define A_C_LAST 255
#define A_C_ID 1023
#define A_OL_I_ID 8191
#define MAX_ARGS 7
#define MAX_LINES 15 /* order lines of a New-Order: 5..15 [2.4.1.3] */
/* An argument as text (ARG_TEXT): at most '{' + 15 x (10 digits and a comma) + '}' for the
 * arrays. An int32 takes at most 11 characters and its separator one more: the arrays always
 * fit, and txn_text's bound checks only guard against a change of these figures. */
_Static_assert(ARG_TEXT >= 2 + MAX_LINES * 12, "ARG_TEXT must hold 15 ints as {..}");
_Static_assert(MAX_ARGS <= MAX_CALL_ARGS, "a call takes MAX_CALL_ARGS arguments at most");

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
_Static_assert(sizeof(txn_t) <= TXN_BYTES, "the loop holds TXN_BYTES of a transaction");

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
/* --mode sql                                                                                 */

extern const PqSqlOps TPCC_PQ_SQL;           /* sqlloop.c */
extern const char *const SQL_STATEMENTS[];   /* its prepared statements' names, NULL-ended */
extern const MySqlOps TPCC_MY_SQL;           /* mytxn.c */
typedef struct {
    const char *name, *text; /* text: a printf format of %ld, %02ld and %s */
} MySql;
extern const MySql MY_SQL[]; /* its statements, NULL-ended; _native.MARIADB_SQL */

extern const Workload TPCC_WORKLOAD; /* workload.c */

#endif
