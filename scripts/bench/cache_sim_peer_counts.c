/* Exact miss counts from libCacheSim, for lite's reference tests and scripts/bench/cache_sim.
 *
 * libCacheSim's cachesim prints miss ratios with four digits; lite's parity claims are about exact
 * counts, so this driver runs the same simulation cachesim runs (its create_cache() table, one
 * simulate_at_multi_sizes call) and prints the integers. Built by scripts/bench/cache_sim against the
 * peer built in build/peers (never part of lite's build; libCacheSim is GPL-3.0 and is not vendored).
 *
 *   cache_sim_peer_counts TRACE oracleGeneral|vscsi ALGO PARAMS|- SIZE[,SIZE...] IGNORE_OBJ_SIZE(0|1)
 *   -> one line per size: size n_req n_miss n_req_byte n_miss_byte
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libCacheSim/reader.h"
#include "libCacheSim/simulator.h"
#include "cache_init.h"  /* cachesim's own name -> cache table (-I the peer's libCacheSim/bin/cachesim) */

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s TRACE oracleGeneral|vscsi ALGO PARAMS|- SIZES IGNORE_OBJ_SIZE\n", argv[0]);
    return 2;
  }
  reader_init_param_t rp = default_reader_init_params();
  rp.ignore_obj_size = atoi(argv[6]) != 0;
  trace_type_e type = strcmp(argv[2], "vscsi") == 0 ? VSCSI_TRACE : ORACLE_GENERAL_TRACE;
  reader_t* reader = open_trace(argv[1], type, &rp);
  uint64_t sizes[64];
  int n = 0;
  for (char* tok = strtok(argv[5], ","); tok && n < 64; tok = strtok(NULL, ",")) sizes[n++] = strtoull(tok, NULL, 10);
  const char* params = strcmp(argv[4], "-") == 0 ? NULL : argv[4];
  cache_t* cache = create_cache(argv[1], argv[3], sizes[0], params, false);
  if (!cache) return 2;
  cache_stat_t* res = simulate_at_multi_sizes(reader, cache, n, sizes, NULL, 0, 0, 1);
  for (int i = 0; i < n; i++)
    printf("%lu %ld %ld %ld %ld\n", (unsigned long)sizes[i], (long)res[i].n_req, (long)res[i].n_miss,
           (long)res[i].n_req_byte, (long)res[i].n_miss_byte);
  return 0;
}
