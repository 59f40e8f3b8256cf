// SPDX-License-Identifier: GPL-2.0
/*
 * The smallest profile there is: one instrumented function, one data record,
 * a names section that needs padding, no value sites. Edge cases in the
 * writer's size and padding arithmetic show up here first.
 */
#include <stdio.h>

int main(int argc, char **argv)
{
	(void)argv;
	printf("argc=%d\n", argc);
	return 0;
}
