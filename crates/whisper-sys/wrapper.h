#include <whisper.h>
#include <ggml.h>
