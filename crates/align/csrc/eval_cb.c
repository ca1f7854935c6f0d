/* Built into PocketSphinx's ptm_mgau.c in place of its eval_cb() (see build.rs).
 *
 * The densities of one codebook's stream, each in a SIMD lane of its own: the distance of the
 * observation from every density, with the same operations in the same order as one density at
 * a time (no fused multiply-add), so the same values bit for bit. */
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off")))
#endif
static void
distances(mfcc_t *restrict dist, const mfcc_t *restrict det, const mfcc_t *restrict mean,
          const mfcc_t *restrict var, const mfcc_t *restrict z, int ceplen, int n)
{
    int j, k;

    for (k = 0; k < n; ++k)
        dist[k] = det[k];
    for (j = 0; j < ceplen; ++j) {
        const mfcc_t obs = z[j];
        const mfcc_t *restrict m = mean + (size_t)j * n;
        const mfcc_t *restrict v = var + (size_t)j * n;
        for (k = 0; k < n; ++k) {
            mfcc_t diff = obs - m[k];
            mfcc_t sqdiff = MFCCMUL(diff, diff);
            mfcc_t compl = MFCCMUL(sqdiff, v[k]);
            dist[k] = GMMSUB(dist[k], compl);
        }
    }
}

/* The top-N densities of a codebook's stream, as the released eval_cb() finds them: that one
 * stops a density's sum once it falls below the worst of the top N; every term it subtracts is
 * at least zero, so those are exactly the densities whose whole distance is below it. */
static int
eval_cb(ptm_mgau_t *s, int cb, int feat, mfcc_t *z)
{
    ptm_topn_t *worst, *best, *topn, *cur;
    const mfcc_t *mean, *var;
    mfcc_t *dist, thresh;
    int32 i, cw, n, ceplen;

    best = topn = s->f->topn[cb][feat];
    worst = topn + (s->max_topn - 1);
    n = s->g->n_density;
    ceplen = s->g->featlen[feat];
    mean = s->by_dim + s->by_dim_at[cb * s->g->n_feat + feat];
    var = mean + (size_t)ceplen * n;
    dist = s->dist;
    distances(dist, s->g->det[cb][feat], mean, var, z, ceplen, n);

    thresh = (mfcc_t) worst->score;
    for (cw = 0; cw < n; ++cw) {
        mfcc_t d = dist[cw];

        if (d < thresh)
            continue;
        for (i = 0; i < s->max_topn; i++) {
            /* already there, so don't need to insert */
            if (topn[i].cw == cw)
                break;
        }
        if (i < s->max_topn)
            continue;
        if (d < (mfcc_t)MAX_NEG_INT32)
            insertion_sort_cb(&cur, worst, best, cw, MAX_NEG_INT32);
        else
            insertion_sort_cb(&cur, worst, best, cw, (int32)d);
        thresh = (mfcc_t) worst->score;
    }

    return best->score;
}

/* Lays each codebook's means and variances out dimension by dimension for distances(). */
static void
ptm_mgau_by_dim(ptm_mgau_t *s)
{
    gauden_t *g = s->g;
    size_t total = 0;
    int cb, f, j, k;

    ckd_free(s->by_dim_at);
    s->by_dim_at = ckd_calloc((size_t)g->n_mgau * g->n_feat, sizeof(*s->by_dim_at));
    for (cb = 0; cb < g->n_mgau; ++cb)
        for (f = 0; f < g->n_feat; ++f) {
            s->by_dim_at[cb * g->n_feat + f] = total;
            total += 2 * (size_t)g->featlen[f] * g->n_density;
        }
    ckd_free(s->by_dim);
    s->by_dim = ckd_calloc(total, sizeof(*s->by_dim));
    ckd_free(s->dist);
    s->dist = ckd_calloc(g->n_density, sizeof(*s->dist));
    for (cb = 0; cb < g->n_mgau; ++cb)
        for (f = 0; f < g->n_feat; ++f) {
            int ceplen = g->featlen[f], n = g->n_density;
            mfcc_t *mean = s->by_dim + s->by_dim_at[cb * g->n_feat + f];
            mfcc_t *var = mean + (size_t)ceplen * n;
            for (k = 0; k < n; ++k)
                for (j = 0; j < ceplen; ++j) {
                    mean[(size_t)j * n + k] = g->mean[cb][f][0][(size_t)k * ceplen + j];
                    var[(size_t)j * n + k] = g->var[cb][f][0][(size_t)k * ceplen + j];
                }
        }
}

