/*
 * The DVD-Store-derived workload in C: what its parts share. (Written for oltplab from the
 * workload's published description; no DVD Store code or data.)
 *
 * terminal.c  DvdsTerminal: one simulated shopper, its random generator, word lists and the
 *             order it is in (a state machine across draws)
 * workload.c  the workload as the loop drives it (loop/workload.h): the calls' arguments for
 *             libpq and MariaDB, what a completed call counts, the module constants
 * sqlpq.c     --mode sql on libpq: each call as its statements in pipelined round trips
 * sqlmy.c     --mode sql on MariaDB: each call as multi-statement round trips
 *
 * Every name outside a file starts with dvds_/Dvds/DVDS_: the TPC-C part's share the module.
 */
#ifndef OLTPLAB_DVDS_H
#define OLTPLAB_DVDS_H

#include "text.h"
#include "workload.h"

/* ------------------------------------------------------------------------------------------ */
/* The calls of an order, in the loop's order of kinds; the loop's unit row follows them     */

#define DVDS_NKINDS 12
enum { DVDS_LOGIN, DVDS_NEW_CUSTOMER, DVDS_BROWSE_CATEGORY, DVDS_BROWSE_ACTOR,
       DVDS_BROWSE_TITLE, DVDS_PURCHASE,
       /* DVD Store 3's (a DS3 run), between the browses and the purchase */
       DVDS_REVIEWS_PRODUCT, DVDS_REVIEWS_ACTOR, DVDS_REVIEWS_TITLE, DVDS_NEW_REVIEW,
       DVDS_NEW_HELPFULNESS, DVDS_NEW_MEMBER };
extern const char *const DVDS_NAMES[DVDS_NKINDS];
#define DVDS_UNIT_NAME "order" /* the loop's row DVDS_NKINDS: one whole order */
_Static_assert(DVDS_NKINDS + 1 <= MAX_KINDS, "the loop holds the kinds and the unit row");

#define DVDS_CATEGORIES 16          /* products' categories 1..16 */
#define DVDS_MAX_CART 10            /* items in a cart at most */
#define DVDS_POPULAR_EVERY 10000    /* every 10,000th product ... */
#define DVDS_POPULAR_WEIGHT 10      /* ... is ten times as likely in a cart */
#define DVDS_MAX_QUANTITY 3         /* an item's quantity 1..3 */
#define DVDS_NEW_USERS 1000000000LL /* a new customer's name: newuser<1..10^9> */
#define DVDS_MAX_COUNT 1000000      /* searches, search_batch, line_items at most */
#define DVDS_MAX_NAME 30            /* a new customer's first and last name: letters, at most */
#define DVDS_WORD_BYTES 32          /* a word of a list, its NUL included */
#define DVDS_MAX_WORDS 1000000      /* words in a list at most */
#define DVDS_US "US"                /* the country of region 1; `countries` are the others */
#define DVDS_PASSWORD "password"    /* every customer's, as the build writes them */
#define DVDS_STARS 5                /* a review's stars 1..5 */
#define DVDS_HELPFULNESS 10         /* a helpfulness rating 1..10 */
#define DVDS_TIERS 3                /* a membership's tier 1..3 */
#define DVDS_SUMMARY_BYTES 51       /* a review's summary (two words), its NUL included */
#define DVDS_REVIEW_BYTES 160       /* a review's text, its NUL included */
#define DVDS_REVIEW_WORDS_MIN 5     /* a review's text: 5..15 words, as many as fit */
#define DVDS_REVIEW_WORDS_MAX 15

/* The word lists Python hands over (workloads/dvds/words.py), by keyword */
enum { DVDS_TITLE_WORDS, DVDS_ACTOR_FIRST, DVDS_ACTOR_LAST, DVDS_COUNTRIES, DVDS_STATES,
       DVDS_NLISTS };
typedef char dvds_word_t[DVDS_WORD_BYTES];
typedef struct {
    dvds_word_t *w; /* n words, each NUL-terminated; NULL until __init__ succeeds */
    int n;
} dvds_list_t;

/* ------------------------------------------------------------------------------------------ */
/* DvdsTerminal                                                                               */

typedef struct {
    PyObject_HEAD
    rng_t rng;
    int64_t customers, products;
    double pct_new_customers; /* 0..100 */
    int searches, search_batch, line_items, first_name_len, last_name_len;
    double think_time; /* s: after a purchase, uniform 0..2x */
    /* DVD Store 3's steps (ds3): review searches per order (uniform 1..2n-1), the percent of
     * orders with a new review, a helpfulness rating, a new membership; the reviews rated
     * are 1..review_ids (the build's) */
    int ds3, review_searches;
    double pct_new_reviews, pct_new_helpfulness, pct_new_members;
    int64_t review_ids;
    dvds_list_t lists[DVDS_NLISTS];
    int driven; /* ProcLoops that hold it: Python must keep its hands off */
    /* Python's own draws (next_call, complete), as the loop's buffer of one user */
    _Alignas(16) unsigned char txn[TXN_BYTES];
    int drawn; /* next_call() has drawn into txn */
    int64_t inputs[MAX_INPUTS];
} DvdsTerminal;

/* A new customer's profile (dvds_new_customer's arguments, text where the call sends text) */
typedef struct {
    char first[DVDS_MAX_NAME + 1], last[DVDS_MAX_NAME + 1];
    char street[12], city[12];
    char state[DVDS_WORD_BYTES], country[DVDS_WORD_BYTES]; /* state "" outside the US */
    int32_t house, zip; /* house 0..9999; zip 0..99999, -1: none (outside the US) */
    int32_t region, card_type, exp_year, exp_month, age, income;
    int64_t phone, card, user; /* user: newuser<user> */
    char gender;
} dvds_profile_t;

/* One user's call as drawn, and the order it belongs to: the loop keeps this buffer
 * (TXN_BYTES) between the user's draws, so the order's state lives here. All zeros (a user's
 * first draw) is "no order under way". */
typedef struct {
    int kind;           /* this call */
    int done;           /* it completed (dvds_completed): else it failed, and the order is over */
    int has;            /* ... and returned value (has: a value at all) */
    long long value;
    int64_t customer;   /* the order's customer: what login or new_customer returned */
    int searches_left;  /* browses of the order still to draw */
    int reviews_left;   /* DS3: review searches of the order still to draw */
    int ds3_steps;      /* DS3: 1 new review, 2 helpfulness rating, 4 new membership, to draw */
    int64_t order_us;   /* the response times of the order's completed calls so far */
    union {
        int64_t user; /* login: user<user> */
        dvds_profile_t profile;
        struct {
            int32_t category, batch;
            char text[2 * DVDS_WORD_BYTES]; /* an actor's full name, or a title word */
        } browse;
        struct {
            int32_t items;
            int32_t prod[DVDS_MAX_CART], quantity[DVDS_MAX_CART];
        } cart;
        struct { /* a review search: of a product, or by actor (a full name) or title word */
            int32_t prod, stars, batch;
            char text[2 * DVDS_WORD_BYTES];
        } search;
        struct {
            int32_t prod, stars;
            char summary[DVDS_SUMMARY_BYTES], text[DVDS_REVIEW_BYTES];
        } review;
        struct {
            int32_t review, helpfulness;
        } rating;
        int32_t tier; /* a new membership's */
    };
} dvds_txn_t;
_Static_assert(sizeof(dvds_txn_t) <= TXN_BYTES, "the loop holds TXN_BYTES of a transaction");

#define DVDS_MAX_ARGS 19 /* dvds_new_customer's */
_Static_assert(DVDS_MAX_ARGS <= MAX_CALL_ARGS, "a call takes MAX_CALL_ARGS arguments at most");
/* A cart as text: '{' + 10 x (10 digits and a comma) + '}'; an actor's name; a word */
_Static_assert(ARG_TEXT >= 2 + DVDS_MAX_CART * 11 + 1, "ARG_TEXT must hold a cart as {..}");
_Static_assert(ARG_TEXT >= 2 * DVDS_WORD_BYTES, "ARG_TEXT must hold an actor's name");
_Static_assert(ARG_TEXT >= DVDS_REVIEW_BYTES, "ARG_TEXT must hold a review's text");

extern PyTypeObject DvdsTerminalType;
int dvds_term_check(DvdsTerminal *t);
int dvds_draw(DvdsTerminal *t, dvds_txn_t *x);
double dvds_think(DvdsTerminal *t, int kind);

/* workload.c */
enum { DVDS_IN_LOGINS, DVDS_IN_NEW_CUSTOMERS, DVDS_IN_SEARCHES, DVDS_IN_BROWSE_CATEGORY,
       DVDS_IN_BROWSE_ACTOR, DVDS_IN_BROWSE_TITLE, DVDS_IN_PURCHASES, DVDS_IN_CART_ITEMS,
       DVDS_IN_ROLLED_BACK_PURCHASES, DVDS_IN_UNKNOWN_LOGINS, DVDS_IN_TAKEN_USERNAMES,
       DVDS_IN_REVIEW_ORDERS, DVDS_IN_REVIEW_SEARCHES, DVDS_IN_REVIEWS_PRODUCT,
       DVDS_IN_REVIEWS_ACTOR, DVDS_IN_REVIEWS_TITLE, DVDS_IN_NEW_REVIEWS,
       DVDS_IN_NEW_HELPFULNESS, DVDS_IN_NEW_MEMBERS, DVDS_IN_TAKEN_MEMBERSHIPS, DVDS_NINPUTS };
extern const char *const DVDS_INPUT_KEYS[DVDS_NINPUTS];
_Static_assert(DVDS_NINPUTS <= MAX_INPUTS, "the loop holds MAX_INPUTS input counts");
int dvds_args_text(const dvds_txn_t *x, char (*text)[ARG_TEXT], int max);
int dvds_literal_args(const dvds_txn_t *x, char (*text)[ARG_TEXT], int max);
int dvds_call_text(const dvds_txn_t *x, const char *out_var, char *buf, size_t size);
int dvds_completed(dvds_txn_t *x, int has, long long value, int64_t us, int64_t *inputs,
                   int64_t *unit_us);
int dvds_word_ok(const char *s, size_t len);

extern const Workload DVDS_WORKLOAD;

/* ------------------------------------------------------------------------------------------ */
/* --mode sql: what the two transports' statements share (workload.c)                         */

/* A purchase's cart as its statements take it: each product once, in prod_id order (the
 * order its INVENTORY rows are locked in), with the quantity of all its lines. */
typedef struct {
    int n;
    int32_t prod[DVDS_MAX_CART], quantity[DVDS_MAX_CART];
} dvds_cart_t;
int dvds_cart_products(const dvds_txn_t *x, dvds_cart_t *c); /* -1: not a cart */
/* The order's amounts in cents from its lines' prices (price_cents[i] of x's line i): net,
 * tax (8.25%, rounded half up to the cent) and total; -1 when a price is missing or out of
 * range. */
int dvds_order_cents(const dvds_txn_t *x, const int64_t *price_cents, int64_t out[3]);
/* Cents as d.dd into buf (size bytes): 0, or -1 when it does not fit. */
int dvds_fmt_cents(char *buf, size_t size, int64_t cents);

/* One call as both transports' statements hold it, kept for its retries */
#define DVDS_AMOUNT_BYTES 24 /* an amount's text, d.dd */
typedef struct {
    dvds_txn_t x; /* the call as drawn */
    int nargs, step; /* nargs -1: its arguments did not fit (or are not literals), or the
                      * cart is not one: the call is refused */
    char args[MAX_CALL_ARGS][ARG_TEXT]; /* its arguments as procedures mode sends them */
    dvds_cart_t cart;                   /* purchase: each product once, in prod_id order */
    int64_t stock[DVDS_MAX_CART], price_cents[DVDS_MAX_CART]; /* by the cart's product */
    int found[DVDS_MAX_CART]; /* bit 1: its INVENTORY row, bit 2: its price */
    char amount[3][DVDS_AMOUNT_BYTES]; /* the order's net, tax and total (dvds_sql_order) */
} dvds_sql_t;
/* Keep the drawn call (literals: its arguments checked as MariaDB literals). */
void dvds_sql_inputs(dvds_sql_t *c, const void *txn, int literals);
/* A purchase whose stock and prices were read: 1 its amounts are in c->amount, 0 a product
 * is short (the order rolls back), -1 a problem, said into problem (size bytes). */
int dvds_sql_order(dvds_sql_t *c, char *problem, size_t size);

extern const char *const DVDS_PQ_STATEMENTS[]; /* sqlpq.c: the prepared names, NULL-ended */
extern const PqSqlOps DVDS_PQ_SQL;
extern const MySqlOps DVDS_MY_SQL;

#endif
