// SPDX-License-Identifier: MIT
/*
 * stm32_adc_conv.c - drivers/iio/adc/stm32-adc.c as of v5.10, reduced:
 * stm32_adc_single_conv() (reinit_completion, start, wait_for_completion_
 * interruptible_timeout(STM32_ADC_TIMEOUT), -ETIMEDOUT on 0, the value on
 * success, the negative value passed up) and the interrupt's complete().
 *
 * The timeout is the kernel's 100 ms only where the test waits it out: a
 * conversion that ends, or a signal, comes from a thread that may run
 * tens of milliseconds late on a loaded machine, so those waits get 10 s,
 * and that thread acts only once the read is waiting.
 */
#include "kstub.h"
#include "harness.h"

static unsigned int stm32_adc_timeout_us = 100000;	/* the kernel's */
#define STM32_ADC_TIMEOUT_US stm32_adc_timeout_us
#define STM32_ADC_TIMEOUT (msecs_to_jiffies(STM32_ADC_TIMEOUT_US / 1000))
#define IIO_VAL_INT 1

struct stm32_adc {
	struct completion completion;
	u16 buffer[1];
	int conversions;	/* the stub hardware */
};

static void stm32_adc_conv_irq_enable(struct stm32_adc *adc) { (void)adc; }
static void stm32_adc_conv_irq_disable(struct stm32_adc *adc) { (void)adc; }
static void stm32_adc_start_conv(struct stm32_adc *adc) { adc->conversions++; }
static void stm32_adc_stop_conv(struct stm32_adc *adc) { (void)adc; }

/* ------------------------------------------------- the kernel's code */

static int stm32_adc_single_conv(struct stm32_adc *adc, int *res)
{
	long timeout;
	int ret;

	reinit_completion(&adc->completion);

	adc->buffer[0] = 0;
	stm32_adc_conv_irq_enable(adc);

	stm32_adc_start_conv(adc);

	timeout = wait_for_completion_interruptible_timeout(
					&adc->completion, STM32_ADC_TIMEOUT);
	if (timeout == 0) {
		ret = -ETIMEDOUT;
	} else if (timeout < 0) {
		ret = timeout;
	} else {
		*res = adc->buffer[0];
		ret = IIO_VAL_INT;
	}

	stm32_adc_stop_conv(adc);

	stm32_adc_conv_irq_disable(adc);

	return ret;
}

/* stm32_adc_isr(): end of conversion. */
static void stm32_adc_isr_eoc(struct stm32_adc *adc, u16 value)
{
	adc->buffer[0] = value;
	complete(&adc->completion);
}

/* ------------------------------------------------------------ the test */

static struct stm32_adc adc;

/* The end of conversion, once the read waits for it. */
static void *eoc(void *arg)
{
	while (!swait_active(&adc.completion.wait))
		h_sleep_ms(1);
	stm32_adc_isr_eoc(&adc, (u16)(uintptr_t)arg);
	return NULL;
}

static void *reader(void *arg)
{
	int v;

	(void)arg;
	return (void *)(intptr_t)stm32_adc_single_conv(&adc, &v);
}

int main(void)
{
	long long t0;
	pthread_t t;
	int v = -1;

	h_watchdog(30);
	h_handler(1);
	init_completion(&adc.completion);

	stm32_adc_timeout_us = 10000000;
	h_start(eoc, (void *)(uintptr_t)1234);
	CHECK(stm32_adc_single_conv(&adc, &v) == IIO_VAL_INT && v == 1234);

	stm32_adc_timeout_us = 100000;
	t0 = h_now_ms();	/* no end of conversion */
	CHECK(stm32_adc_single_conv(&adc, &v) == -ETIMEDOUT);
	CHECK(h_now_ms() - t0 >= 100);

	/* A signal (SA_RESTART) ends the read with -ERESTARTSYS. */
	stm32_adc_timeout_us = 10000000;
	h_handled = 0;
	t = h_start(reader, NULL);
	while (!swait_active(&adc.completion.wait))
		h_sleep_ms(1);
	h_wait_asleep(t);
	pthread_kill(t, SIGUSR1);
	CHECK((intptr_t)h_join(t) == -ERESTARTSYS && h_handled == 1);
	CHECK(adc.conversions == 3);
	return 0;
}
