/*
 * sched_setscheduler(tid, SCHED_IDLE), for the daemon's main thread to put Node's and V8's own
 * helper threads below every other thread on the machine (src/pool/helper-threads.ts says which
 * threads and why), and, with pool.worker_policy idle, the ingest workers kept when quiet
 * (src/pool/ingest-pool.ts). Lowering a thread's policy needs no privilege; Node has no call for it.
 *
 * Built by scripts/build-native.mjs (the committed binary is checked against this source by
 * test/unit/pool/native-addons.test.ts where the same compiler is present).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/types.h>
#include <node_api.h>

/* idle(tid) -> 0 when the thread now runs SCHED_IDLE, else the errno that refused it. A tid of 0
 * would mean the calling thread: refused (EINVAL), the caller names every thread it lowers. */
static napi_value idle(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t tid = 0;
  napi_value out;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  int rc = EINVAL;
  if (argc >= 1 && napi_get_value_int32(env, argv[0], &tid) == napi_ok && tid > 0) {
    struct sched_param p = { .sched_priority = 0 };
    rc = sched_setscheduler((pid_t)tid, SCHED_IDLE, &p) == 0 ? 0 : errno;
  }
  if (napi_create_int32(env, rc, &out) != napi_ok) return NULL;
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "idle", NAPI_AUTO_LENGTH, idle, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "idle", fn) != napi_ok) return NULL;
  return exports;
}
