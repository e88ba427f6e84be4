/*
 * What mariadb.c (the library, the session type) and myloop.c (the MariaDB transport of
 * ProcLoop) share. The header of libmariadb-dev gives the types and constants only: every
 * function is called through ``my``, filled by load_libmariadb().
 */
#ifndef OLTPLAB_MARIADB_H
#define OLTPLAB_MARIADB_H

#include "procloop.h"
#include <mariadb/mysql.h>

struct my_api {
    int loaded;
    __typeof__(mysql_server_init) *server_init;
    __typeof__(mysql_init) *init;
    __typeof__(mysql_options) *options;
    __typeof__(mysql_real_connect) *real_connect;
    __typeof__(mysql_close) *close;
    __typeof__(mysql_autocommit) *autocommit;
    __typeof__(mysql_real_query) *query;
    __typeof__(mysql_errno) *errno_of;
    __typeof__(mysql_error) *error;
    __typeof__(mysql_thread_id) *thread_id;
    __typeof__(mysql_get_socket) *get_socket;
    __typeof__(mysql_store_result) *store_result;
    __typeof__(mysql_fetch_row) *fetch_row;
    __typeof__(mysql_free_result) *free_result;
    __typeof__(mysql_num_rows) *num_rows;
    __typeof__(mysql_num_fields) *num_fields;
    __typeof__(mysql_data_seek) *data_seek;
    __typeof__(mysql_real_query_start) *real_query_start;
    __typeof__(mysql_real_query_cont) *real_query_cont;
    __typeof__(mysql_store_result_start) *store_result_start;
    __typeof__(mysql_store_result_cont) *store_result_cont;
    __typeof__(mysql_next_result_start) *next_result_start;
    __typeof__(mysql_next_result_cont) *next_result_cont;
};
extern struct my_api my;
int load_libmariadb(void);

/* One user's session. driven: a MariaDBLoop holds it (it runs without the GIL), so Python
 * may not close it. */
typedef struct {
    PyObject_HEAD
    MYSQL *m;
    int driven;
} MyConn;

extern PyTypeObject MyConnType, MariaDBLoopType;

#endif
