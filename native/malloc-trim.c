/*
 * glibc's malloc_trim(0), for the daemon's main thread (src/pool/malloc-trim.ts says when and why).
 *
 * free() gives memory back to the OS only from the top of a heap; the pages of free chunks in the
 * middle of an arena stay resident until malloc_trim walks them. Every ingest worker thread that
 * ends leaves its share of glibc's heaps as such chunks (~2 MB a worker, measured), and nothing in
 * Node reaches malloc_trim. This is the whole addon: one N-API function, no state, no threads.
 *
 * Built by scripts/build-native.mjs (the committed binary is checked against this source by
 * test/unit/pool/native-addons.test.ts where the same compiler is present).
 */
#include <malloc.h>
#include <node_api.h>

/* trim() -> true when some memory was given back to the OS (malloc_trim returned 1) */
static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  if (napi_get_boolean(env, malloc_trim(0) == 1, &out) != napi_ok) return NULL;
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != napi_ok) return NULL;
  return exports;
}
