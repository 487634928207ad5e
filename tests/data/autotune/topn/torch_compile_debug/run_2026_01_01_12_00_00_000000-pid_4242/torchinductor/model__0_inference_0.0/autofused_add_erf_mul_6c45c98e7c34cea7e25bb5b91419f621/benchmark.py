import argparse


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--mode', choices=['profile', 'precision'])
    p.parse_args()


if __name__ == '__main__':
    main()
