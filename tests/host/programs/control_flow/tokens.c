// SPDX-License-Identifier: GPL-2.0
/* A switch-driven scanner: many case arms, some never taken. */
#include "control_flow.h"

enum state { IN_NOTHING, IN_WORD, IN_NUMBER };

void count_tokens(const char *text, struct token_counts *out)
{
	enum state state = IN_NOTHING;

	*out = (struct token_counts){ 0 };
	for (const char *p = text;; p++) {
		char c = *p;
		enum state next;

		switch (c) {
		case 'a' ... 'z':
		case 'A' ... 'Z':
		case '_':
			next = state == IN_NUMBER ? IN_NUMBER : IN_WORD;
			break;
		case '0' ... '9':
			next = state == IN_WORD ? IN_WORD : IN_NUMBER;
			break;
		case '+': case '-': case '*': case '/': case '=': case '<': case '>':
			out->operators++;
			next = IN_NOTHING;
			break;
		case ' ': case '\t': case '\n':
			out->spaces++;
			next = IN_NOTHING;
			break;
		case '\0':
			next = IN_NOTHING;
			break;
		case '\x7f': /* never present in the input: a zero-count arm */
			out->other += 1000;
			next = IN_NOTHING;
			break;
		default:
			out->other++;
			next = IN_NOTHING;
			break;
		}
		if (next != state) {
			if (state == IN_WORD)
				out->words++;
			else if (state == IN_NUMBER)
				out->numbers++;
		}
		state = next;
		if (c == '\0')
			break;
	}
}
