// SPDX-License-Identifier: GPL-2.0
/* A second thread, which the front-end model must refuse to model. */
#include <pthread.h>

static void *thread(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t;

	return pthread_create(&t, NULL, thread, NULL) || pthread_join(t, NULL);
}
