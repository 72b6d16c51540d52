from unittest import TestCase
from calc.ops import double


class DoubleTests(TestCase):
    def test_two(self):
        self.assertEqual(double(2), 4)

    def test_zero(self):
        '''Zero doubles to zero.'''
        self.assertEqual(double(0), 0)
