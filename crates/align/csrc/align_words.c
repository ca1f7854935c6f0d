
/* Added to PocketSphinx's pocketsphinx.c after ps_set_align_text() (see build.rs).
 *
 * As ps_set_align_text(), the words in order, but a word whose `optional` flag is set may be
 * left out: its arc has a null arc beside it, both free. The search takes it only where the
 * sound is better explained with it. */
int
ps_set_align_words(ps_decoder_t *ps, const char *const *words, const int *optional,
                   int n_words)
{
    fsg_model_t *fsg;
    int i;

    for (i = 0; i < n_words; ++i) {
        if (dict_wordid(ps->dict, words[i]) == BAD_S3WID) {
            E_ERROR("Unknown word %s\n", words[i]);
            return -1;
        }
    }
    fsg = fsg_model_init("_align", ps->lmath,
                         ps_config_float(ps->config, "lw"), n_words + 1);
    for (i = 0; i < n_words; ++i) {
        int wid = fsg_model_word_add(fsg, words[i]);
        fsg_model_trans_add(fsg, i, i + 1, 0, wid);
        if (optional[i])
            fsg_model_null_trans_add(fsg, i, i + 1, 0);
    }
    fsg->start_state = 0;
    fsg->final_state = n_words;
    if (ps_add_fsg(ps, PS_DEFAULT_ALIGN_SEARCH, fsg) < 0) {
        fsg_model_free(fsg);
        return -1;
    }
    fsg_model_free(fsg);
    return ps_activate_search(ps, PS_DEFAULT_ALIGN_SEARCH);
}
