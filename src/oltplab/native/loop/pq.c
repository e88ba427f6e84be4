/*
 * libpq, as loaded by psycopg: the caller passes the library's path and it is opened with
 * RTLD_NOLOAD, so the connections' objects are shared, TLS and all.
 */
#include "native.h"

struct pq_api pq;


int load_libpq(const char *path) {
    if (pq.loaded) return 0;
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
        PyErr_Format(PyExc_RuntimeError, "libpq at %s is not loaded: %s", path, dlerror());
        return -1;
    }
#define SYM(field, name)                                                                     \
    if (!(*(void **)&pq.field = dlsym(h, name))) {                                           \
        PyErr_Format(PyExc_RuntimeError, "libpq at %s has no %s", path, name);               \
        return -1;                                                                           \
    }
    SYM(sendQueryPrepared, "PQsendQueryPrepared")
    SYM(sendQuery, "PQsendQuery")
    SYM(flush, "PQflush")
    SYM(consumeInput, "PQconsumeInput")
    SYM(isBusy, "PQisBusy")
    SYM(getResult, "PQgetResult")
    SYM(resultStatus, "PQresultStatus")
    SYM(ntuples, "PQntuples")
    SYM(nfields, "PQnfields")
    SYM(getisnull, "PQgetisnull")
    SYM(getvalue, "PQgetvalue")
    SYM(resultErrorField, "PQresultErrorField")
    SYM(clear, "PQclear")
    SYM(status, "PQstatus")
    SYM(errorMessage, "PQerrorMessage")
    SYM(socket, "PQsocket")
    SYM(cmdTuples, "PQcmdTuples")
#undef SYM
    /* pipeline mode (libpq >= 14), for --mode sql only: see pq_has_pipeline() */
    *(void **)&pq.enterPipelineMode = dlsym(h, "PQenterPipelineMode");
    *(void **)&pq.exitPipelineMode = dlsym(h, "PQexitPipelineMode");
    *(void **)&pq.pipelineSync = dlsym(h, "PQpipelineSync");
    pq.loaded = 1; /* the handle stays open: psycopg holds the library anyway */
    return 0;
}

int pq_has_pipeline(void) {
    return pq.enterPipelineMode && pq.exitPipelineMode && pq.pipelineSync;
}
