/*
 * ann_sweep.c — recall@10 and latency of the vector index's HNSW (src/vec/hnsw.h) over its
 * build and search parameters, in process, on generated data (docs/benchmarks.md "Search
 * defaults": how the default search beam was chosen).  Data files are emulated by splitting
 * the vectors into graphs of FILE_ROWS each (a load writes data files of 65,536 rows; optimize
 * compacts 100,000 into one), queried for their top 10 each and merged, like the engine does.
 *
 *   ann_sweep N DIM KIND FILE_ROWS EF_CONSTRUCTION [M]
 *     KIND: clustered (100 Gaussian topics, centres sigma 1.5, points sigma 1, like
 *           bench_hybrid.c), many (1,000 topics, sigma 1), lowrank (16 latent dimensions + 5 %
 *           noise), gauss (isotropic Gaussian: no structure)
 *   Prints one line per search beam ef in 32..256: recall@10 over 200 queries against brute
 *   force, and the mean latency per query.  Seeded: the same data every run.
 *
 * Build: cc -O2 -std=c11 -Isrc -Iinclude bench/search/ann_sweep.c build/release/libog_vec.a \
 *          build/release/libog_util.a -lstdc++ -lm -lpthread
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "vec/hnsw.h"
#include "vec/distance.h"
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void){rng^=rng<<13;rng^=rng>>7;rng^=rng<<17;return ((double)(rng>>11)+0.5)/9007199254740992.0;}
static float gauss(void){return (float)(sqrt(-2.0*log(urand()))*cos(6.283185307179586*urand()));}
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
  size_t n=atoi(argv[1]); int dim=atoi(argv[2]); const char*kind=argv[3]; size_t filerows=atoi(argv[4]); int efc=atoi(argv[5]); int M=argc>6?atoi(argv[6]):16;
  int nq=200, topics=100;
  float*x=malloc(n*dim*4),*q=malloc(nq*dim*4),*c=malloc(topics*dim*4);
  for(int i=0;i<topics*dim;i++)c[i]=gauss()*1.5f;
  int R=16; float*W=malloc(dim*R*4); for(int i=0;i<dim*R;i++)W[i]=gauss()/4;
  if(kind[0]=='m'){topics=1000;free(c);c=malloc(topics*dim*4);for(int i=0;i<topics*dim;i++)c[i]=gauss();}
  for(size_t i=0;i<n+nq;i++){float*o=i<n?x+i*dim:q+(i-n)*dim;size_t t=(size_t)(urand()*topics);
    if(kind[0]=='l'){float z[16];for(int r=0;r<R;r++)z[r]=gauss();for(int d=0;d<dim;d++){float v=0;for(int r=0;r<R;r++)v+=W[d*R+r]*z[r];o[d]=v+0.05f*gauss();}}
    else for(int d=0;d<dim;d++)o[d]=(kind[0]=='c'||kind[0]=='m')?c[t*dim+d]+gauss():gauss();}
  uint32_t*gt=malloc(nq*10*4);
  for(int qi=0;qi<nq;qi++){float bd[10];uint32_t bi[10];int nb=0;
    for(size_t i=0;i<n;i++){float d=og_vec_l2sq(q+qi*dim,x+i*dim,dim);int j=nb<10?nb++:10;if(j==10&&d>=bd[9])continue;if(j==10)j=9;while(j>0&&bd[j-1]>d){bd[j]=bd[j-1];bi[j]=bi[j-1];j--;}bd[j]=d;bi[j]=i;}
    memcpy(gt+qi*10,bi,40);}
  size_t nf=(n+filerows-1)/filerows; og_hnsw**h=malloc(nf*sizeof*h);
  double t0=now();
  for(size_t f=0;f<nf;f++){size_t s=f*filerows,m=n-s<filerows?n-s:filerows;uint64_t*lab=malloc(m*8);for(size_t i=0;i<m;i++)lab[i]=s+i;
    if(og_hnsw_build(&h[f],dim,x+s*dim,lab,m,M,efc,2))return 1;free(lab);}
  double bt=now()-t0;
  int efs[]={32,64,96,128,160,200,256};
  for(int e=0;e<7;e++){int ef=efs[e];size_t hit=0;double t1=now();
    for(int qi=0;qi<nq;qi++){uint64_t all[10*64];float ad[10*64];size_t na=0;
      for(size_t f=0;f<nf;f++){size_t got;og_hnsw_search(h[f],q+qi*dim,10,ef,all+na,ad+na,&got);na+=got;}
      /* top 10 of union */
      for(int k=0;k<10&&k<(int)na;k++){size_t b=k;for(size_t j=k+1;j<na;j++)if(ad[j]<ad[b])b=j;float td=ad[k];ad[k]=ad[b];ad[b]=td;uint64_t tl=all[k];all[k]=all[b];all[b]=tl;
        for(int g=0;g<10;g++)hit+=all[k]==gt[qi*10+g];}}
    double lt=(now()-t1)/nq*1e3;
    printf("%s n=%zu dim=%d files=%zu M=%d efC=%d build=%.1fs ef=%d recall=%.3f lat=%.3fms\n",kind,n,dim,nf,M,efc,bt,ef,hit/(double)(nq*10),lt);}
  return 0;}
